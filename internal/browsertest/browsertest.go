package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options tunes a browser.
type Options struct {
	// Timeout bounds each wait for the browser: an answer to a command,
	// a WaitFor (default 30 s).
	Timeout time.Duration
	// Headers are sent with every request of the page, its fetches
	// included: an Authorization header, for instance, which chromium
	// does not take from a URL's user:password into the page's fetch().
	Headers map[string]string
}

// names are the commands chromium is installed as (Debian's package, and
// other distributions').
var names = []string{"chromium", "chromium-browser", "google-chrome"}

// Path is the chromium found on PATH, or an error saying how to install it.
func Path() (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("chromium is not installed (looked for chromium, chromium-browser, google-chrome on PATH): " +
		"install it with `apt-get install -y chromium` or run scripts/test-deps.sh")
}

// Page is a page loaded in a headless chromium of its own.
type Page struct {
	t       testing.TB
	timeout time.Duration
	session string // the DevTools session attached to the page's target

	out io.WriteCloser // commands to the browser (its fd 3)
	wmu sync.Mutex

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan reply
	dead    error // why the browser's answers stopped, once they have
	stderr  *syncBuffer
}

// reply is the browser's answer to one command.
type reply struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Open starts a headless chromium, loads url in it and waits for the
// page's load event. It fails t when chromium is missing or does not
// answer; the browser stops when the test ends.
func Open(t testing.TB, url string, opt Options) *Page {
	t.Helper()
	bin, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	p := &Page{t: t, timeout: opt.Timeout, waiting: map[int64]chan reply{}, stderr: &syncBuffer{}}
	if p.timeout <= 0 {
		p.timeout = 30 * time.Second
	}
	// The browser reads commands from fd 3 and writes answers to fd 4.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--headless=new",
		// Tests often run as root in a container, where the sandbox cannot start.
		"--no-sandbox",
		"--disable-gpu",
		"--disable-dev-shm-usage",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-extensions",
		"--disable-background-networking",
		"--disable-component-update",
		"--log-level=3",
		"--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe",
		"about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, ansW}
	cmd.Stderr = p.stderr
	// The browser runs renderer and GPU processes of its own: it gets a
	// process group so that stopping it reaches them all, and none
	// outlives the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	// The browser holds its own copies of the pipes' far ends now.
	_ = cmdR.Close()
	_ = ansW.Close()
	p.out = cmdW
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		p.read(ansR)
	}()
	t.Cleanup(func() {
		_ = cmdW.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = ansR.Close()
		<-readDone
	})

	var target struct {
		TargetID string `json:"targetId"`
	}
	p.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	p.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	p.session = attached.SessionID
	if len(opt.Headers) > 0 {
		p.call(p.session, "Network.enable", map[string]any{}, nil)
		p.call(p.session, "Network.setExtraHTTPHeaders", map[string]any{"headers": opt.Headers}, nil)
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	p.call(p.session, "Page.navigate", map[string]any{"url": url}, &nav)
	if nav.ErrorText != "" {
		t.Fatalf("load %s: %s", url, nav.ErrorText)
	}
	p.WaitFor(`document.readyState === "complete"`)
	return p
}

// read dispatches the browser's answers (NUL-terminated JSON messages)
// to the commands waiting for them; events are not asked for and dropped.
func (p *Page) read(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			p.mu.Lock()
			p.dead = fmt.Errorf("the browser's answers ended: %w", err)
			for id, ch := range p.waiting {
				close(ch)
				delete(p.waiting, id)
			}
			p.mu.Unlock()
			return
		}
		var rep reply
		if json.Unmarshal(msg[:len(msg)-1], &rep) != nil || rep.ID == 0 {
			continue
		}
		p.mu.Lock()
		ch, ok := p.waiting[rep.ID]
		delete(p.waiting, rep.ID)
		p.mu.Unlock()
		if ok {
			ch <- rep
		}
	}
}

// call sends one DevTools command (to session, or the browser when it is
// "") and decodes its result into result; it fails the test when the
// browser refuses or does not answer in time.
func (p *Page) call(session, method string, params any, result any) {
	p.t.Helper()
	p.mu.Lock()
	if p.dead != nil {
		p.mu.Unlock()
		p.t.Fatalf("%s: %v\nchromium's stderr:\n%s", method, p.dead, p.stderr.tail())
	}
	p.nextID++
	id := p.nextID
	ch := make(chan reply, 1)
	p.waiting[id] = ch
	p.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		p.t.Fatalf("encode %s: %v", method, err)
	}
	p.wmu.Lock()
	_, err = p.out.Write(append(data, 0))
	p.wmu.Unlock()
	if err != nil {
		p.t.Fatalf("send %s to chromium: %v\nchromium's stderr:\n%s", method, err, p.stderr.tail())
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			p.t.Fatalf("%s: chromium stopped answering\nchromium's stderr:\n%s", method, p.stderr.tail())
		}
		if rep.Error != nil {
			p.t.Fatalf("%s: chromium: %s", method, rep.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(rep.Result, result); err != nil {
				p.t.Fatalf("decode the answer to %s: %v", method, err)
			}
		}
	case <-time.After(p.timeout):
		p.t.Fatalf("%s: no answer from chromium within %s\nchromium's stderr:\n%s", method, p.timeout, p.stderr.tail())
	}
}

// Eval runs the script expression js in the page (awaiting it when it is
// a promise) and returns its value as JSON. A script that throws fails
// the test.
func (p *Page) Eval(js string) json.RawMessage {
	p.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	p.call(p.session, "Runtime.evaluate", map[string]any{"expression": js, "returnByValue": true, "awaitPromise": true}, &res)
	if e := res.ExceptionDetails; e != nil {
		p.t.Fatalf("%s threw: %s %s", js, e.Text, e.Exception.Description)
	}
	return res.Result.Value
}

// WaitFor waits until the script expression js is true in the page,
// checking it every 50 ms; it fails the test, with the page's DOM, when
// it is still false after the timeout.
func (p *Page) WaitFor(js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	for {
		if bytes.Equal(p.Eval("Boolean("+js+")"), []byte("true")) {
			return
		}
		select {
		case <-ctx.Done():
			p.t.Fatalf("%s is still false after %s; the page:\n%s", js, p.timeout, p.DOM())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DOM is the page's document as it is now, serialized.
func (p *Page) DOM() string {
	p.t.Helper()
	var html string
	if err := json.Unmarshal(p.Eval("document.documentElement.outerHTML"), &html); err != nil {
		p.t.Fatalf("decode the DOM: %v", err)
	}
	return html
}

// syncBuffer is the browser's stderr, written by the process while a
// failing test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// tail is the end of what was written: enough to see why a browser failed.
func (b *syncBuffer) tail() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	const most = 4000
	data := b.buf.Bytes()
	return bytes.Clone(data[max(len(data)-most, 0):])
}
