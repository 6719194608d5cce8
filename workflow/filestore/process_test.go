//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/workflow"
	"github.com/lockgate/lockgate/workflow/locktest"
)

// TestHelperProcess is the body of the helper processes that the tests
// below start; run on its own it skips.
func TestHelperProcess(t *testing.T) {
	locktest.HelperProcess(t, func(dir string) (workflow.Store, error) { return Open(dir) })
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

// TestSIGKILL kills processes in the middle of acquiring, refreshing and
// releasing. Afterwards every record is whole and every key can be taken:
// no half-written file, no flock left behind.
func TestSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills 40 processes")
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	keys := []string{"src/a.go", "src/**", "task:TASK-001", "docs/" + strings.Repeat("Long", 60) + ".md"}
	for i := range 20 {
		// Two helpers, so that kills also land in takeovers of the other's
		// expired locks.
		a := locktest.StartChurn(t, "TestHelperProcess", dir, keys)
		b := locktest.StartChurn(t, "TestHelperProcess", dir, keys)
		time.Sleep(time.Duration(2+rand.IntN(30)) * time.Millisecond)
		if err := a.Kill(); err != nil {
			t.Fatalf("kill %d: helper reported: %v", i, err)
		}
		time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
		if err := b.Kill(); err != nil {
			t.Fatalf("kill %d: helper reported: %v", i, err)
		}
		entries, err := s.List(context.Background())
		if err != nil {
			t.Fatalf("kill %d: List: %v", i, err)
		}
		for _, e := range entries {
			if e.Err != nil {
				t.Fatalf("kill %d: %s: %v", i, e.Name, e.Err)
			}
		}
		for _, k := range keys {
			if _, err := s.Get(context.Background(), k); err != nil && !errors.Is(err, workflow.ErrNotFound) {
				t.Fatalf("kill %d: Get(%q): %v", i, k, err)
			}
		}
	}
	tmp, _ := os.ReadDir(filepath.Join(dir, ".tmp"))
	entries, _ := s.List(context.Background())
	t.Logf("after the kills: %d records left, %d temp files left", len(entries), len(tmp))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	later := time.Now().Add(time.Hour)
	for _, k := range keys {
		rec, _, err := s.Acquire(ctx, locktest.NewLock(k, "survivor", later, time.Hour), later)
		if err != nil {
			t.Fatalf("Acquire(%q) after the kills: %v", k, err)
		}
		if err := s.Release(ctx, k, rec.Token); err != nil {
			t.Fatalf("Release(%q) after the kills: %v", k, err)
		}
	}
}
