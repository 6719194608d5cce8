package browsertest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Options tunes a run of the browser.
type Options struct {
	// Budget is the virtual time the page's scripts get before the DOM is
	// dumped: timers and fetches within it run, at no cost in wall time
	// for timers (default 5 s).
	Budget time.Duration
	// Timeout bounds the browser's run in wall time (default 60 s).
	Timeout time.Duration
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

// DumpDOM loads url in a headless chromium and returns the serialized DOM
// once the page's scripts had opt.Budget of virtual time. It fails t when
// chromium is missing, does not finish in time or fails.
func DumpDOM(t testing.TB, url string, opt Options) string {
	t.Helper()
	bin, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	budget := opt.Budget
	if budget <= 0 {
		budget = 5 * time.Second
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
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
		"--user-data-dir="+t.TempDir(),
		"--virtual-time-budget="+strconv.FormatInt(budget.Milliseconds(), 10),
		"--dump-dom",
		url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The browser runs renderer and GPU processes of its own: it gets a
	// process group so that a kill on timeout reaches them all, and they
	// never outlive the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		// The group is gone already when the browser exited cleanly.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		if ctx.Err() != nil {
			t.Fatalf("chromium did not dump %s within %s: %v\nstderr:\n%s", url, timeout, err, tail(stderr.Bytes()))
		}
		t.Fatalf("chromium --dump-dom %s: %v\nstderr:\n%s", url, err, tail(stderr.Bytes()))
	}
	if stdout.Len() == 0 {
		t.Fatalf("chromium dumped no DOM for %s\nstderr:\n%s", url, tail(stderr.Bytes()))
	}
	return stdout.String()
}

// tail is the end of a browser's stderr: enough to see why it failed.
func tail(b []byte) []byte {
	const most = 4000
	if len(b) > most {
		return b[len(b)-most:]
	}
	return b
}
