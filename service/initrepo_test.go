package service_test

import (
	"os"
	"path/filepath"
	"testing"

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
		{name: "writes the starter file", req: service.InitRequest{Agent: "claude-code"}},
		{name: "keeps the repository's policy", before: func() { r.Write(".lockgate.yaml", "version: 1\n") }, wantKept: true},
		{name: "replaces it with force", req: service.InitRequest{Force: true}},
		{name: "unknown agent, nothing written", req: service.InitRequest{Force: true, Agent: "vim"}, before: func() { r.Write(".lockgate.yaml", "version: 1\n") },
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
			in, err := loadAs(t, r.Dir, "alice", nil).Init(tt.req)
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
	_, err := loadAs(t, bare, "alice", nil).Init(service.InitRequest{})
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
	root := t.TempDir()
	tests := []struct {
		name        string
		do          func(root, agent string) ([]service.AgentStep, error)
		agent       string
		wantChanged bool
		wantErr     any
	}{
		{name: "set up", do: service.SetupAgent, agent: "claude-code", wantChanged: true},
		{name: "set up again", do: service.SetupAgent, agent: "claude-code"},
		{name: "remove", do: service.RemoveAgent, agent: "claude-code", wantChanged: true},
		{name: "unknown agent", do: service.SetupAgent, agent: "vim", wantErr: new(*agentsetup.Error)},
	}
	for _, tt := range tests {
		steps, err := tt.do(root, tt.agent)
		wantError(t, err, tt.wantErr)
		if tt.wantErr != nil {
			continue
		}
		if len(steps) == 0 {
			t.Fatalf("%s: no step", tt.name)
		}
		for _, s := range steps {
			if s.Changed != tt.wantChanged {
				t.Fatalf("%s: %+v, want changed %v", tt.name, s, tt.wantChanged)
			}
		}
	}
}
