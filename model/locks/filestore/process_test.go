//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

// TestHelperProcess is the body of the helper processes that the tests
// below start; run on its own it skips.
func TestHelperProcess(t *testing.T) {
	locktest.HelperProcess(t, func(dir string) (locks.Store, error) { return Open(dir) })
}

func TestProcessRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 16 processes")
	}
	dir := t.TempDir()
	locktest.RunProcessRace(t, openStore(t, dir), locktest.ProcessRace{
		Procs: 16, Rounds: 50, Key: "src/race.go", Test: "TestHelperProcess", Store: dir,
	})
}

func TestProcessTakeoverRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 16 processes")
	}
	dir := t.TempDir()
	locktest.RunProcessRace(t, openStore(t, dir), locktest.ProcessRace{
		Procs: 16, Rounds: 20, Key: "task:TASK-001", Takeover: true, Test: "TestHelperProcess", Store: dir,
	})
}

// TestSIGKILL: no half-written file, no flock left behind by a process
// killed in the middle of a change (and no temporary file kept).
func TestSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills 40 processes")
	}
	dir := t.TempDir()
	locktest.RunKillChurn(t, openStore(t, dir), locktest.KillChurn{Test: "TestHelperProcess", Store: dir, Kills: 20})
}
