// Package usecasetest holds what the use-case tests of the service and
// of its session share: a fixed clock, a repository with files, an
// environment that names only what a test gives it, a collector of what
// a request says on the side, and error and path checks.
package usecasetest

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// Epoch is the fake clock's reading: every request of a test runs at it,
// unless its clock ticks.
var Epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// FixedClock reads Epoch, always.
func FixedClock() time.Time { return Epoch }

// TickingClock advances by step at every reading, from Epoch.
func TickingClock(step time.Duration) func() time.Time {
	now := Epoch
	return func() time.Time {
		now = now.Add(step)
		return now
	}
}

// Clock is a clock a test moves by hand; the workspaces of a test share
// it, so that expiry and takeover follow it, not the wall clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// RepoWith is a repository with one commit of files (name to content).
func RepoWith(t *testing.T, files map[string]string) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	r.Write("README.md", "x\n")
	for name, content := range files {
		r.Write(name, content)
	}
	r.Commit("init")
	return r
}

// WantError fails unless err is nil when target is nil, or else holds an
// error of target's type (errors.As).
func WantError(t *testing.T, err error, target any) {
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

// RelTo is file relative to dir when it is inside it, else file.
func RelTo(dir, file string) string {
	if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return file
}

// EnvOf is an environment of the variables vars names (KEY=VALUE).
func EnvOf(vars ...string) func(string) string {
	return func(k string) string {
		for _, kv := range vars {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}
}

// Notes collects what a request says on the side (Options.Notify).
type Notes struct {
	mu   sync.Mutex
	msgs []string
}

// Notify records one message, as "LEVEL: MSG".
func (n *Notes) Notify(level, msg string, _ ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, level+": "+msg)
}

// Messages are the messages recorded, in order.
func (n *Notes) Messages() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.msgs...)
}

// String is every message, one a line.
func (n *Notes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.msgs, "\n")
}
