// Package browsertest drives a real headless chromium for tests: DumpDOM
// loads a page, lets its scripts run and returns the document as the
// browser left it (chromium's --dump-dom), so a test can see what a page
// rendered from its data, not what the server sent.
//
//	dom := browsertest.DumpDOM(t, srv.URL+"/#worker=bob", browsertest.Options{})
//
// Each call runs its own browser with a fresh profile in a temporary
// directory. When chromium is not installed, DumpDOM fails the test (it
// never skips): `make test` installs it through scripts/test-deps.sh.
package browsertest
