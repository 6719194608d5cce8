package service_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/agentsetup"
)

func TestInit(t *testing.T) {
	r := repoWith(t, nil)
	policy := filepath.Join(r.Dir, ".lockgate.yaml")
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.yaml")
	tests := []struct {
		name string
		req  service.InitRequest
		// before runs ahead of the request.
		before   func()
		wantKept bool
		wantErr  any
	}{
		{name: "writes the starter file", req: service.InitRequest{Agents: []string{"claude-code"}}},
		{name: "keeps the repository's policy", before: func() { r.Write(".lockgate.yaml", "version: 1\n") }, wantKept: true},
		{name: "replaces it with force", req: service.InitRequest{Force: true}},
		{name: "unknown agent, nothing written", req: service.InitRequest{Force: true, Agents: []string{"vim"}}, before: func() { r.Write(".lockgate.yaml", "version: 1\n") },
			wantErr: new(*agentsetup.Error)},
		{name: "never through a link", req: service.InitRequest{Force: true}, before: func() {
			if err := os.Remove(policy); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, policy); err != nil {
				t.Fatal(err)
			}
		}, wantErr: new(error)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			in, err := loadAs(t, r.Dir, "alice", nil).Init(context.Background(), tt.req)
			wantError(t, err, tt.wantErr)
			data, rerr := os.ReadFile(policy)
			if tt.wantErr != nil {
				if string(data) != "version: 1\n" && rerr == nil {
					t.Fatalf("the policy became %q on error", data)
				}
				return
			}
			if in.Path != policy || in.Root != r.Dir || in.Kept != tt.wantKept {
				t.Fatalf("init %+v, want %s kept %v", in, policy, tt.wantKept)
			}
			if rerr != nil || tt.wantKept != (string(data) == "version: 1\n") {
				t.Fatalf("the policy is %q (%v) after init, kept %v", data, rerr, tt.wantKept)
			}
			if !tt.wantKept {
				if _, err := loadAs(t, r.Dir, "alice", nil).Validate(service.ValidateRequest{}); err != nil {
					t.Fatalf("the starter file does not validate: %v", err)
				}
				// It writes the defaults out, not other choices: no lock
				// around a claim's choice (docs/config.md).
				if c, err := config.Load(policy); err != nil || c.Locks.GlobalClaimLock() {
					t.Fatalf("the starter file turns the global claim lock on (%v)", err)
				}
			}
		})
	}
	if _, err := os.Stat(elsewhere); !os.IsNotExist(err) {
		t.Fatalf("init wrote through the link: %v", err)
	}
}

func TestInitBare(t *testing.T) {
	r := repoWith(t, nil)
	bare := filepath.Join(t.TempDir(), "bare.git")
	r.Git("clone", "-q", "--bare", r.Dir, bare)
	_, err := loadAs(t, bare, "alice", nil).Init(context.Background(), service.InitRequest{})
	wantError(t, err, new(*service.UsageError))
}

func TestAgentSettings(t *testing.T) {
	// The settings name lockgate as PATH finds it, as they do once it is
	// installed (the test binary has another name).
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "lockgate"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, agent := range service.Agents {
		t.Run(agent, func(t *testing.T) {
			root := t.TempDir()
			steps, err := service.SetupAgent(root, agent, true)
			if err != nil || len(steps) == 0 {
				t.Fatalf("dry run: %v, %v", steps, err)
			}
			for _, s := range steps {
				if !s.Changed || !strings.Contains(s.Diff, "+++ "+s.Path) || !strings.Contains(s.Diff, "\n+") {
					t.Fatalf("dry run step %+v", s)
				}
				if _, err := os.Stat(s.Path); err == nil {
					t.Fatalf("dry run wrote %s", s.Path)
				}
			}
			for round, wantChanged := range []bool{true, false} {
				steps, err := service.SetupAgent(root, agent, false)
				if err != nil || len(steps) == 0 {
					t.Fatalf("set up %d: %v, %v", round, steps, err)
				}
				for _, s := range steps {
					if s.Changed != wantChanged || s.Diff != "" {
						t.Fatalf("set up %d: %+v, want changed %v", round, s, wantChanged)
					}
					if _, err := os.Stat(s.Path); err != nil {
						t.Fatalf("set up %d: %v", round, err)
					}
				}
			}
			steps, err = service.RemoveAgent(root, agent)
			if err != nil || len(steps) == 0 {
				t.Fatalf("remove: %v, %v", steps, err)
			}
			if steps, err = service.RemoveAgent(root, agent); err != nil || len(steps) != 0 {
				t.Fatalf("remove again: %v, %v", steps, err)
			}
			err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("left %s behind", path)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	_, err := service.SetupAgent(t.TempDir(), "vim", false)
	wantError(t, err, new(*agentsetup.Error))
}
