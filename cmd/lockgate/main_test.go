package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
)

// TestMain removes the binary built for the multi-process tests and the
// scripts (lockgateBinary) when the tests end.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtDir  string
	builtBin  string
	buildErr  error
)

// lockgateBinary builds the real binary (and lockgate-hook beside it,
// hookBinary) once per test run: the multi-process tests and benchmarks
// start thousands of processes, and a plain build starts far faster than
// the race-instrumented test binary.
func lockgateBinary(t testing.TB) string {
	buildOnce.Do(func() {
		builtDir, buildErr = os.MkdirTemp("", "lockgate-test")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(builtDir, "lockgate")
		// The hook binary beside it, as `make install` puts it: the shims
		// that `lockgate install` writes run it for the commit and push
		// hooks, so every test that commits drives it.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", builtDir+string(filepath.Separator), ".", "../lockgate-hook")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as `make build` makes it
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// hookBinary is the hook binary lockgateBinary built beside lockgate.
func hookBinary(t testing.TB) string {
	return filepath.Join(filepath.Dir(lockgateBinary(t)), "lockgate-hook")
}

func TestScripts(t *testing.T) {
	t.Parallel()
	// One real Redis for every script; each repository gets its own key
	// prefix (derived from its path), so scripts in parallel stay apart.
	redis := redistest.Start(t, redistest.Options{})
	bin := filepath.Dir(lockgateBinary(t))
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			for _, kv := range gittest.Env(home) {
				k, v, _ := strings.Cut(kv, "=")
				env.Setenv(k, v)
			}
			// `exec lockgate` runs the binary as built for users: the
			// scripts start over a thousand lockgate processes, and the
			// race-instrumented test binary costs several times a plain
			// one to start and run (the packages' own tests run under
			// the race detector).
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("LOCKGATE_WORKER", "alice@test")
			env.Setenv("REDIS", redis.URL())
			env.Setenv("LOCKGATE_WORKER_TYPE", "human")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// sleep D waits for a Go duration.
			"sleep": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: sleep DURATION")
				}
				d, err := time.ParseDuration(args[0])
				if err != nil {
					ts.Fatalf("sleep: %v", err)
				}
				time.Sleep(d)
			},
			// now DURATION VAR sets VAR to the time DURATION from now, in
			// UTC as git and lockgate read it (2026-11-23T10:00:00Z): to
			// date commits and events around real lock events.
			"now": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: now DURATION VAR")
				}
				d, err := time.ParseDuration(args[0])
				if err != nil {
					ts.Fatalf("now: %v", err)
				}
				ts.Setenv(args[1], time.Now().Add(d).UTC().Format(time.RFC3339))
			},
			// gitdaemon start BASEDIR VAR serves the repositories under
			// BASEDIR with `git daemon` on 127.0.0.1, pushes allowed, and
			// sets VAR to its git:// URL (ending in '/'); gitdaemon stop
			// stops it (the script's end does too).
			"gitdaemon": gitDaemonCmd,
			// exitcode N CMD ARGS... runs CMD and requires exit code N.
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exitcode N command [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exitcode: %v", err)
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("exitcode: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", args[1], got, want)
				}
			},
		},
	})
}
