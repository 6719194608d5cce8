package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lockgate/lockgate/internal/cli"
	"github.com/lockgate/lockgate/internal/gittest"
)

// TestMain lets the test binary act as lockgate: in testscript scripts (as
// the `lockgate` command) and for the multi-process tests (with
// LOCKGATE_TEST_AS_CLI=1), so every lockgate run is a real process.
func TestMain(m *testing.M) {
	if os.Getenv("LOCKGATE_TEST_AS_CLI") == "1" {
		os.Exit(runCLI())
	}
	testscript.Main(m, map[string]func(){
		"lockgate": func() { os.Exit(runCLI()) },
	})
}

func runCLI() int {
	return cli.Main(context.Background(), os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

func TestScripts(t *testing.T) {
	t.Parallel()
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
			env.Setenv("LOCKGATE_WORKER", "alice@test")
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
