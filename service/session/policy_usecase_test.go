package session_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/service/session"
)

// policyRepo is a repository whose first commit, tagged base, has no
// policy; its second, tagged strict, commits one; a branch "loose" off
// base commits another, merged into HEAD (tagged merge); the work tree's
// .lockgate.yaml is loosened and left uncommitted.
func policyRepo(t *testing.T) *gittest.Repo {
	t.Helper()
	r := repoWith(t, nil)
	r.Git("tag", "base")
	r.Write(".lockgate.yaml", "version: 1\nlocks: {stale_minutes: 10}\n")
	r.Commit("strict")
	r.Git("tag", "strict")
	r.Git("checkout", "-q", "-b", "loose", "base")
	r.Write(".lockgate.yaml", "version: 1\nlocks: {stale_minutes: 999}\n")
	r.Commit("loose")
	r.Git("checkout", "-q", "-")
	r.Git("merge", "-q", "-s", "ours", "-m", "merge", "loose")
	r.Git("tag", "merge")
	r.Write(".lockgate.yaml", "version: 1\nlocks: {stale_minutes: 5000}\n")
	return r
}

func TestJudgeByBase(t *testing.T) {
	ctx := context.Background()
	r := policyRepo(t)
	tests := []struct {
		name string
		// configFile is -c FILE.
		configFile, rng string
		// wantPath is the policy that judges after; wantNote a part of
		// a warning said.
		wantPath, wantNote string
		wantErr            any
	}{
		{name: "the base's policy, as the user named it", rng: "strict..HEAD", wantPath: "strict:.lockgate.yaml"},
		{name: "a base without a policy: the defaults, with a warning", rng: "base..strict", wantNote: "has no .lockgate.yaml"},
		{name: "a range without a base: the defaults, with a warning", rng: "strict", wantNote: "has no base commit"},
		{name: "bases with different policies", rng: "merge^!", wantErr: new(*session.UsageError)},
		{name: "-c FILE is kept", configFile: ".lockgate.yaml", rng: "strict..HEAD", wantPath: ".lockgate.yaml"},
		{name: "a range git does not know", rng: "nope..HEAD", wantErr: new(error)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var said notes
			opts := session.Options{Dir: r.Dir, As: "alice", Getenv: envOf(), Clock: fixedClock, Notify: said.Notify}
			if tt.configFile != "" {
				opts.ConfigFile = filepath.Join(r.Dir, tt.configFile)
			}
			e, err := session.Load(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			err = e.JudgeByBase(ctx, tt.rng)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			if got := relTo(r.Dir, e.ConfigPath()); got != tt.wantPath {
				t.Fatalf("judged by %q, want %q", got, tt.wantPath)
			}
			if !strings.Contains(said.String(), tt.wantNote) || tt.wantNote == "" && said.String() != "" {
				t.Fatalf("said %q, want %q", said.String(), tt.wantNote)
			}
		})
	}
	t.Run("a base whose policy is not valid", func(t *testing.T) {
		r := repoWith(t, map[string]string{".lockgate.yaml": "version: 1\nlocks: {stale_minutes: many}\n"})
		r.Write(".lockgate.yaml", "version: 1\n")
		r.Commit("fixed")
		e := loadAs(t, r.Dir, "alice", nil)
		wantError(t, e.JudgeByBase(ctx, "HEAD~1..HEAD"), new(*config.Error))
	})
}

func TestJudgeByHead(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// commit: the repository has a commit.
		commit             bool
		wantPath, wantNote string
	}{
		{name: "HEAD's policy, not the work tree's", commit: true, wantPath: "HEAD:.lockgate.yaml"},
		{name: "no commit yet: the defaults, with a warning", wantNote: "has no base commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gittest.New(t)
			if tt.commit {
				r.Write(".lockgate.yaml", "version: 1\n")
				r.Commit("policy")
			}
			r.Write(".lockgate.yaml", "version: 1\nlocks: {stale_minutes: 5000}\n")
			var said notes
			e, err := session.Load(ctx, session.Options{Dir: r.Dir, As: "alice", Getenv: envOf(), Clock: fixedClock, Notify: said.Notify})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			if err := e.JudgeByHead(ctx); err != nil {
				t.Fatal(err)
			}
			if got := e.ConfigPath(); got != tt.wantPath {
				t.Fatalf("judged by %q, want %q", got, tt.wantPath)
			}
			if !strings.Contains(said.String(), tt.wantNote) || tt.wantNote == "" && said.String() != "" {
				t.Fatalf("said %q, want %q", said.String(), tt.wantNote)
			}
		})
	}
}
