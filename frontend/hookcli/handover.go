package hookcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/lockgate/lockgate/service/outcome"
)

// handOver runs `lockgate hook ARGS...` on stdin and stdio, and returns
// its exit code. Without a lockgate to run, the hook fails closed.
func handOver(ctx context.Context, args []string, stdin io.Reader, stdio Stdio) int {
	bin, err := fullBinary()
	if err != nil {
		fmt.Fprintf(stdio.Err, "lockgate: hook %s: %v\n", args[0], err)
		return outcome.ExitUnavailable
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"hook"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdio.Out, stdio.Err
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return outcome.ExitOK
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	fmt.Fprintf(stdio.Err, "lockgate: hook %s: run %s: %v\n", args[0], bin, err)
	return outcome.ExitUnavailable
}

// fullBinary is the lockgate the hook binary hands hooks to.
func fullBinary() (string, error) {
	if bin := os.Getenv(FullBinaryEnv); bin != "" {
		return bin, nil
	}
	if self, err := os.Executable(); err == nil {
		bin := filepath.Join(filepath.Dir(self), "lockgate")
		if fi, err := os.Stat(bin); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return bin, nil
		}
	}
	bin, err := exec.LookPath("lockgate")
	if err != nil {
		return "", fmt.Errorf("this hook needs lockgate, which is neither next to lockgate-hook nor on PATH (or set %s): install both (`make install`, or `go install github.com/lockgate/lockgate/cmd/...`)", FullBinaryEnv)
	}
	return bin, nil
}
