//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

// TestHelperProcess is the body of the helper processes that the tests
// below start, each with a clone of its own; run on its own it skips.
func TestHelperProcess(t *testing.T) {
	locktest.HelperProcess(t, func(url string) (locks.Store, error) {
		dir, err := os.MkdirTemp("", "gitstore-clone-")
		if err != nil {
			return nil, err
		}
		for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "remote", "add", "origin", url}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git %v: %v: %s", args, err, out)
			}
		}
		return Open(Options{GitDir: filepath.Join(dir, ".git"), WorkTree: dir, Remote: "origin", ClockSkew: DefaultClockSkew})
	})
}

// Processes with clones of their own race for one key: exactly one wins
// each round, every loser names the winner.
func TestProcessRace(t *testing.T) {
	url := bareRemote(t)
	locktest.RunProcessRace(t, openClone(t, url, Options{Reuse: -1}), locktest.ProcessRace{
		Procs: 8, Rounds: gittest.Rounds(t, 40), Key: "src/race.go", Test: "TestHelperProcess", Store: url,
	})
}

func TestProcessTakeoverRace(t *testing.T) {
	url := bareRemote(t)
	locktest.RunProcessRace(t, openClone(t, url, Options{Reuse: -1}), locktest.ProcessRace{
		Procs: 8, Rounds: gittest.Rounds(t, 20), Key: "task:TASK-001", Takeover: true, Test: "TestHelperProcess", Store: url,
	})
}
