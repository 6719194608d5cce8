// Package browsertest drives a real headless chromium for tests, over the
// DevTools protocol on a pipe (--remote-debugging-pipe): Open starts a
// browser with a fresh profile and loads a page; WaitFor waits until a
// script expression holds in it; Eval runs script in it (a click, a
// question); DOM returns the document as the page's scripts left it, so a
// test sees what a page rendered from its data, not what the server sent.
//
//	p := browsertest.Open(t, srv.URL+"/#worker=bob", browsertest.Options{})
//	p.WaitFor(`document.querySelectorAll("#locks tbody tr").length > 0`)
//	dom := p.DOM()
//
// The browser is stopped, with every process it started, when the test
// ends. When chromium is not installed, Open fails the test (it never
// skips): `make test` installs it through scripts/test-deps.sh.
package browsertest
