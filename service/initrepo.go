package service

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/scope"
	"github.com/lockgate/lockgate/service/agentsetup"
	"github.com/lockgate/lockgate/service/session"
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
	// Signed turns workflow.signed on in the starter file, writes the
	// allowed signers (SignersFile) with this worker's signing key and
	// Signers, and has git sign this clone's commits.
	Signed bool
	// Signers are other workers' keys, each WORKER=PUBLIC-KEY-FILE.
	Signers []string
}

// Initialized is what `init` did with the policy: the file, whether an
// existing one was kept, and the working tree, where an agent's settings
// go.
type Initialized struct {
	Path string
	Kept bool
	Root string
	// Signers is the allowed signers file written (--signed).
	Signers string
}

// Init writes the starter .lockgate.yaml at the root of the working tree,
// never through a symbolic link. An existing file is kept unless
// req.Force: a teammate following the quick start in a repository set up
// before (or adding an agent) keeps the team's policy.
func (e *Workspace) Init(ctx context.Context, req InitRequest) (*Initialized, error) {
	if e.WorkTree() == "" {
		return nil, Usagef("init: needs a working tree (this is a bare repository)")
	}
	for _, a := range req.Agents {
		if err := agentsetup.Check(a); err != nil {
			return nil, err
		}
	}
	if len(req.Signers) > 0 && !req.Signed {
		return nil, Usagef("init: --signer names keys for --signed; add --signed")
	}
	out := &Initialized{Path: filepath.Join(e.WorkTree(), config.DefaultFile), Root: e.WorkTree()}
	starter := starterConfig
	if req.Signed {
		signers, err := e.allowedSigners(ctx, req.Signers)
		if err != nil {
			return nil, err
		}
		if out.Signers, err = e.writeSigners(signers); err != nil {
			return nil, err
		}
		for _, kv := range [][2]string{{"gpg.format", "ssh"}, {"commit.gpgsign", "true"}} {
			if err := gitexec.SetLocalConfig(ctx, e.repo(), kv[0], kv[1], false); err != nil {
				return nil, fmt.Errorf("init: %w", err)
			}
		}
		starter = bytes.Replace(starter, []byte("  remote: origin\n"), []byte("  remote: origin\n  signed: required     # lockgate and git sign with user.signingkey\n"), 1)
	}
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
	if _, err := f.Write(starter); err != nil {
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

// allowedSigners are the lines of the allowed signers file init --signed
// writes: this worker with the public key of its user.signingkey, then
// each WORKER=FILE of signers.
func (e *Workspace) allowedSigners(ctx context.Context, signers []string) ([]string, error) {
	key, err := gitexec.SigningPublicKey(ctx, e.repo())
	if err != nil {
		return nil, Usagef("init --signed: %v", err)
	}
	lines := []string{e.Me.Holder + " " + key}
	for _, s := range signers {
		worker, file, ok := strings.Cut(s, "=")
		if !ok || worker == "" || file == "" {
			return nil, Usagef("init: --signer %q: want WORKER=PUBLIC-KEY-FILE", s)
		}
		if _, err := session.NewOwner(worker, scope.WorkerHuman, worker); err != nil {
			return nil, Usagef("init: --signer %q: %v", s, err)
		}
		data, err := os.ReadFile(e.CmdFile(file))
		if err != nil {
			return nil, Usagef("init: --signer %q: %v", s, err)
		}
		k, err := gitexec.PublicKeyLine(string(data))
		if err != nil {
			return nil, Usagef("init: --signer %q: %s: %v", s, file, err)
		}
		lines = append(lines, worker+" "+k)
	}
	return lines, nil
}

// writeSigners writes the allowed signers file, adding to one that is
// there the workers it lacks; it returns the file's path.
func (e *Workspace) writeSigners(lines []string) (string, error) {
	file := filepath.Join(e.WorkTree(), filepath.FromSlash(SignersFile))
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("init: %w", err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			have[f[0]] = true
		}
	}
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text == "" {
		text = "# Workers' SSH signing keys (git's allowed signers format; principal = worker id).\n"
	}
	for _, l := range lines {
		if w, _, _ := strings.Cut(l, " "); !have[w] {
			text += l + "\n"
			have[w] = true
		}
	}
	if err := safefs.MkdirAll(filepath.Dir(file), 0o755, 1); err != nil {
		return "", fmt.Errorf("init: %w", err)
	}
	f, err := safefs.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", fmt.Errorf("init: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", fmt.Errorf("init: write %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("init: write %s: %w", file, err)
	}
	return file, nil
}
