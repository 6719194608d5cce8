//go:build linux

package hooks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// pushArgs returns the arguments after `push` of the git push running
// this hook, read from /proc: git does not list on a pre-push hook's
// stdin the remote refs --mirror and --prune delete. The hook runs under
// git itself, or under the shell of lockgate's shim; nil when no ancestor
// close by is a git push.
func pushArgs() []string {
	pid := os.Getppid()
	for range 4 {
		if pid <= 1 {
			return nil
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return nil
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if len(args) > 1 && strings.HasPrefix(filepath.Base(args[0]), "git") {
			for i, a := range args[1:] {
				if a == "push" {
					return args[i+2:]
				}
			}
		}
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return nil
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 {
			return nil
		}
		if pid, err = strconv.Atoi(f[1]); err != nil {
			return nil
		}
	}
	return nil
}
