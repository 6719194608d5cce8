package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
)

// runLockgate runs the lockgate binary in r and returns its exit code and output.
func runLockgate(t *testing.T, r *gittest.Repo, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(lockgateBinary(t), args...)
	cmd.Dir = r.Dir
	cmd.Env = append(append([]string(nil), r.Env...), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run lockgate %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// TestStoreNeverPrintsPassword: a Redis URL with a password is recorded for
// the clone, and no output — messages, JSON, warnings, refusals, the event
// log — shows the password.
func TestStoreNeverPrintsPassword(t *testing.T) {
	t.Parallel()
	const secret = "s3cretpw"
	srv := redistest.Start(t, redistest.Options{Password: secret})
	url := srv.URL()
	if !strings.Contains(url, secret) {
		t.Fatalf("URL %s carries no password", url)
	}
	r := gittest.New(t)
	r.Write("README.md", "x\n")
	r.Commit("init")
	env := []string{"LOCKGATE_WORKER=alice@test"}
	var all strings.Builder
	step := func(wantCode int, args ...string) string {
		t.Helper()
		code, out, errs := runLockgate(t, r, env, args...)
		all.WriteString(out + errs)
		if code != wantCode {
			t.Fatalf("lockgate %v: exit %d, want %d\n%s%s", args, code, wantCode, out, errs)
		}
		return out + errs
	}
	step(0, "store", "use", url)
	if got := r.Git("config", "--local", "lockgate.store"); got != url {
		t.Fatalf("lockgate.store = %q, want %q", got, url)
	}
	if out := step(0, "lock", "acquire", "a.py"); !strings.Contains(out, "acquired a.py in redis://:xxxxx@127.0.0.1:") {
		t.Fatalf("acquire does not name the store: %s", out)
	}
	step(0, "lock", "list")
	step(0, "lock", "list", "--json")
	step(0, "store", "show")
	step(0, "store", "show", "--json")
	step(0, "log")
	step(0, "--json", "log")
	// Another server named with a password: the refusal and the warning
	// name it without one.
	other := strings.Replace(url, "127.0.0.1", "localhost", 1)
	step(2, "--store", other, "lock", "acquire", "b.py")
	step(0, "--store", other, "lock", "check", "b.py")
	// A wrong password is exit 3, not recorded, not printed.
	wrong := strings.Replace(url, secret, "wrongpw", 1)
	if out := step(3, "store", "use", wrong); strings.Contains(out, "wrongpw") {
		t.Fatalf("wrong password printed: %s", out)
	}
	step(0, "lock", "release", "a.py")
	if strings.Contains(all.String(), secret) {
		t.Fatalf("password printed:\n%s", all.String())
	}
}
