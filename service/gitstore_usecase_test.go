package service_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
)

// StateAgeNote is the git store's alone: a pre-commit hook may judge by a
// state of the locks the remote confirmed less than locks.git.max_age ago,
// and then says how old it was.
func TestStateAgeNote(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		policy  string
		purpose service.Purpose
		// want is a part of the note; "" no note.
		want string
	}{
		{name: "a hook judging by a cached state", purpose: service.Purpose{Cached: true},
			policy: "version: 1\nworkflow: {auto_commit: false}\nlocks:\n  store: git\n  git: {max_age: 1h}\n",
			want:   "locks as origin refs/lockgate/locks had them"},
		{name: "a command that asks the remote", purpose: service.Purpose{TakesLocks: true},
			policy: "version: 1\nworkflow: {auto_commit: false}\nlocks:\n  store: git\n  git: {max_age: 1h}\n"},
		{name: "no max_age", purpose: service.Purpose{Cached: true},
			policy: "version: 1\nworkflow: {auto_commit: false}\nlocks:\n  store: git\n"},
		{name: "the file store", purpose: service.Purpose{Cached: true},
			policy: "version: 1\nworkflow: {auto_commit: false}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gittest.New(t)
			for _, kv := range r.Env { // git run by the store: the repository's hermetic environment
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			remote := filepath.Join(t.TempDir(), "remote.git")
			r.Git("init", "-q", "--bare", remote)
			r.Write(".lockgate.yaml", tt.policy)
			r.Write("a.go", "package a\n")
			r.Commit("init")
			r.Git("remote", "add", "origin", remote)
			r.Git("push", "-q", "origin", "HEAD")
			alice := openAs(t, r.Dir, "alice", nil)
			takeKeys(t, alice, "a.go")
			e := loadAs(t, r.Dir, "bob", nil)
			if err := e.Open(ctx, tt.purpose); err != nil {
				t.Fatal(err)
			}
			note := e.StateAgeNote()
			if tt.want == "" && note != "" || !strings.Contains(note, tt.want) || tt.want != "" && !strings.Contains(note, "(locks.git.max_age: 1h0m0s)") {
				t.Fatalf("note %q, want %q", note, tt.want)
			}
		})
	}
}
