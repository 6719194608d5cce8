package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/scope"
	"github.com/lockgate/lockgate/service/hooks"
)

// SignersFile is where a repository lists its workers' SSH signing keys,
// in git's gpg.ssh.allowedSignersFile format, one principal per worker id.
// It is always read as committed on the base a change is judged by.
const SignersFile = ".lockgate/allowed_signers"

// pusherVars are the variables a check outside a server hook (check and
// verify in CI) takes the pusher from: not USER, which names the CI
// runner's account there.
var pusherVars = []string{"LOCKGATE_PUSHER", "GL_USERNAME", "GITEA_PUSHER_NAME", "REMOTE_USER"}

// pusherOf is the pusher binding for user, as trust.pushers of the judging
// policy maps it: the workers user may push commits of, its own first.
func (e *Workspace) pusherOf(user string, refuse bool) *hooks.Pusher {
	workers, ok := e.cfg.Trust.Pushers[user]
	if !ok {
		workers = config.WorkerList{user}
	}
	return &hooks.Pusher{Name: user, Workers: workers, Refuse: refuse}
}

// ciPusher is the pusher a check or verify outside a server hook was told
// of (pusherVars), or nil: then commits' trailers are believed as they
// stand, and only signatures (workflow.signed) can tell a forged one.
func (e *Workspace) ciPusher() (*hooks.Pusher, error) {
	for _, v := range pusherVars {
		if id := e.getenv(v); id != "" {
			p := e.pusherOf(id, true)
			if _, err := newOwner(p.Workers[0], scope.WorkerHuman, p.Workers[0]); err != nil {
				return nil, Usagef("%s: %v", v, err)
			}
			return p, nil
		}
	}
	return nil, nil
}

// signersAt checks commits' signatures by the allowed signers committed at
// rev (SignersFile); a rev without the file allows no signer.
func (e *Workspace) signersAt(rev string) func(ctx context.Context, shas []string) (map[string]string, error) {
	return func(ctx context.Context, shas []string) (map[string]string, error) {
		if rev == "" {
			return map[string]string{}, nil
		}
		data, found, err := gitexec.CommitFile(ctx, e.repo, rev, SignersFile)
		if err != nil {
			return nil, fmt.Errorf("read the allowed signers: %w", err)
		}
		if !found {
			return map[string]string{}, nil
		}
		return gitexec.SignedBy(ctx, e.Root(), data, shas)
	}
}

// bindPusher makes h hold commits' trailers to p, with signatures checked
// by the allowed signers committed at base.
func (e *Workspace) bindPusher(h *hooks.Runner, p *hooks.Pusher, base string) {
	if p == nil {
		return
	}
	h.Pusher = p
	h.Signers = e.signersAt(base)
}

// localSignersBase is where pre-push reads the allowed signers: the
// remote's default branch as this clone last fetched it, else HEAD ("" when
// neither is a commit).
func (e *Workspace) localSignersBase(ctx context.Context, remote string) string {
	for _, ref := range []string{"refs/remotes/" + remote + "/HEAD", "HEAD"} {
		out, err := gitexec.RepoOutput(ctx, e.repo, "rev-parse", "-q", "--verify", ref+"^{commit}")
		if err == nil {
			return strings.TrimSpace(string(out))
		}
	}
	return ""
}
