package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
)

// epoch is the fake clock's reading: every request of a test runs at it,
// unless its clock ticks.
var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fixedClock reads epoch, always.
func fixedClock() time.Time { return epoch }

// tickingClock advances by step at every reading, from epoch.
func tickingClock(step time.Duration) func() time.Time {
	now := epoch
	return func() time.Time {
		now = now.Add(step)
		return now
	}
}

// repoWith is a repository with one commit of files (name to content).
func repoWith(t *testing.T, files map[string]string) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	r.Write("README.md", "x\n")
	for name, content := range files {
		r.Write(name, content)
	}
	r.Commit("init")
	return r
}

// loadAs loads the workspace of dir for worker as, a human of session as,
// on clock (nil: fixedClock), with an environment that names nothing.
func loadAs(t *testing.T, dir, as string, clock func() time.Time) *service.Workspace {
	t.Helper()
	if clock == nil {
		clock = fixedClock
	}
	e, err := service.Load(context.Background(), service.Options{Dir: dir, As: as, WorkerType: "human",
		Getenv: func(string) string { return "" }, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// openAs is loadAs with the lock store opened, for taking locks.
func openAs(t *testing.T, dir, as string, clock func() time.Time) *service.Workspace {
	t.Helper()
	e := loadAs(t, dir, as, clock)
	if err := e.Open(context.Background(), service.Purpose{TakesLocks: true}); err != nil {
		t.Fatal(err)
	}
	return e
}

// wantError fails unless err is nil when target is nil, or else holds an
// error of target's type (errors.As).
func wantError(t *testing.T, err error, target any) {
	t.Helper()
	if target == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil || !errors.As(err, target) {
		t.Fatalf("error %v (%T), want a %T", err, err, target)
	}
}

// relTo is file relative to dir when it is inside it, else file.
func relTo(dir, file string) string {
	if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return file
}

// notes collects what a request says on the side.
type notes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notes) notify(level, msg string, _ ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, level+": "+msg)
}

func (n *notes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.msgs, "\n")
}

// envOf is an environment of the variables vars names (KEY=VALUE).
func envOf(vars ...string) func(string) string {
	return func(k string) string {
		for _, kv := range vars {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}
}
