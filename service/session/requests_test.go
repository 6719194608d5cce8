package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service/session"
)

// epoch is the fake clock's reading: every request of a test runs at it,
// unless its clock ticks.
var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fixedClock reads epoch, always.
func fixedClock() time.Time { return epoch }

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
func loadAs(t *testing.T, dir, as string, clock func() time.Time) *session.Workspace {
	t.Helper()
	if clock == nil {
		clock = fixedClock
	}
	e, err := session.Load(context.Background(), session.Options{Dir: dir, As: as, WorkerType: "human",
		Getenv: func(string) string { return "" }, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
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
