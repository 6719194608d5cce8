package service

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/service/agentsetup"
)

// starterConfig is the .lockgate.yaml `init` writes.
//
//go:embed starter.lockgate.yaml
var starterConfig []byte

// InitRequest is `init`: whether an existing .lockgate.yaml is replaced
// (Force), and the coding agents to be set up after the hooks are
// installed, checked before anything is written.
type InitRequest struct {
	Force  bool
	Agents []string
}

// Initialized is what `init` did with the policy: the file, whether an
// existing one was kept, and the working tree, where an agent's settings
// go.
type Initialized struct {
	Path string
	Kept bool
	Root string
}

// Init writes the starter .lockgate.yaml at the root of the working tree,
// never through a symbolic link. An existing file is kept unless
// req.Force: a teammate following the quick start in a repository set up
// before (or adding an agent) keeps the team's policy.
func (e *Workspace) Init(req InitRequest) (*Initialized, error) {
	if e.repo.Toplevel == "" {
		return nil, Usagef("init: needs a working tree (this is a bare repository)")
	}
	for _, a := range req.Agents {
		if err := agentsetup.Check(a); err != nil {
			return nil, err
		}
	}
	out := &Initialized{Path: filepath.Join(e.repo.Toplevel, config.DefaultFile), Root: e.repo.Toplevel}
	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if req.Force {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	// Never through a link: Force must not overwrite where it points.
	f, err := safefs.OpenFile(out.Path, flag, 0o644)
	switch {
	case errors.Is(err, os.ErrExist):
		out.Kept = true
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("init: %w", err)
	}
	if _, err := f.Write(starterConfig); err != nil {
		f.Close()
		return nil, fmt.Errorf("init: write %s: %w", out.Path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("init: write %s: %w", out.Path, err)
	}
	return out, nil
}

// AgentStep is one entry an agent's set-up wrote or removed, in one of its
// settings files.
type AgentStep = agentsetup.Step

// Agents are the coding agents lockgate sets up.
var Agents = agentsetup.Agents

// SetupAgent writes lockgate's entries into the settings of agent in the
// working tree at root, returning what it did with each, even on error;
// with dryRun it writes nothing, and each step carries its diff.
func SetupAgent(root, agent string, dryRun bool) ([]AgentStep, error) {
	return agentsetup.Setup(root, agent, dryRun)
}

// RemoveAgent takes lockgate's entries out of the settings of agent in the
// working tree at root, returning those it removed, even on error.
func RemoveAgent(root, agent string) ([]AgentStep, error) { return agentsetup.Remove(root, agent) }
