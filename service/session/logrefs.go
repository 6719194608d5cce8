package session

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// ServeUser is one user of `lockgate serve`, as `serve user list` shows
// it: the name is the worker id of every lock the user takes, the type
// its worker type. Only a hash of the token is kept (tokenHash). Admin
// lets the user clear another user's lock through the server (ForceCheck):
// a token is handed to tools and scripts, and most of them should only
// ever end their own locks.
type ServeUser struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"`
	Admin   bool      `json:"admin"`
	Created time.Time `json:"created"`
}

// LogRefs are where a clone keeps the workflow branch: its own, and the
// remote's as last fetched.
func (e *Workspace) LogRefs() []string {
	b := e.Cfg.Workflow.Branch
	return []string{"refs/heads/" + b, "refs/remotes/" + e.LogRemote() + "/" + b}
}

// LogRemote is the remote the lock log is fetched from: workflow.remote,
// or, in a clone that has no remote of that name but exactly one other
// (`git clone -o upstream`), that one. With several, workflow.remote
// stays: which of them holds the log is the policy's to say.
func (e *Workspace) LogRemote() string {
	want := e.Cfg.Workflow.Remote
	out, err := gitexec.RepoOutput(context.Background(), e.repo, "remote")
	if err != nil {
		return want
	}
	remotes := strings.Fields(string(out))
	if len(remotes) == 1 && !slices.Contains(remotes, want) {
		return remotes[0]
	}
	return want
}
