package session

import (
	"context"
	"strings"
	"sync"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/scope"
)

// SignersFile is where a repository lists its workers' SSH signing keys,
// in git's gpg.ssh.allowedSignersFile format, one principal per worker id.
// It is always read as committed on the base a change is judged by.
const SignersFile = ".lockgate/allowed_signers"

// pusherVars are the variables a check outside a server hook (check and
// verify in CI) takes the pusher from: not USER, which names the CI
// runner's account there.
var pusherVars = []string{"LOCKGATE_PUSHER", "GL_USERNAME", "GITEA_PUSHER_NAME", "REMOTE_USER"}

// PusherOf is the pusher binding for user, as trust.pushers of the judging
// policy maps it: the workers user may push commits of, its own first.
func (e *Workspace) PusherOf(user string, refuse bool) *hooks.Pusher {
	workers, ok := e.Cfg.Trust.Pushers[user]
	if !ok {
		workers = config.WorkerList{user}
	}
	return &hooks.Pusher{Name: user, Workers: workers, Refuse: refuse}
}

// CIPusher is the pusher a check or verify outside a server hook was told
// of (pusherVars), or nil: then commits' trailers are believed as they
// stand, and only signatures (workflow.signed) can tell a forged one.
func (e *Workspace) CIPusher() (*hooks.Pusher, error) {
	for _, v := range pusherVars {
		if id := e.Getenv(v); id != "" {
			p := e.PusherOf(id, true)
			if _, err := NewOwner(p.Workers[0], scope.WorkerHuman, p.Workers[0]); err != nil {
				return nil, Usagef("%s: %v", v, err)
			}
			return p, nil
		}
	}
	return nil, nil
}

// signersAt checks commits' signatures by the allowed signers committed at
// rev, with the checker the service hands in (Workspace.CheckSignatures).
// A binary that does not link one (the hook binary) answers a
// NotLinkedError, and hands the hook to lockgate: most hooks never ask.
func (e *Workspace) signersAt(rev string) func(ctx context.Context, shas []string) (map[string][]string, error) {
	if e.CheckSignatures != nil {
		return e.CheckSignatures(rev)
	}
	return func(context.Context, []string) (map[string][]string, error) {
		return nil, &NotLinkedError{What: "the check of SSH signatures"}
	}
}

// BindPusher makes h hold commits' trailers to p (nil: no pusher known)
// and, under workflow.signed: required, to their signatures, checked by
// the allowed signers committed at base.
func (e *Workspace) BindPusher(h *hooks.Runner, p *hooks.Pusher, base string) {
	h.RequireSigned = e.Cfg.Workflow.Signed == config.SignedRequired
	if p == nil && !h.RequireSigned {
		return
	}
	h.Pusher = p
	h.Signers = e.signersAt(base)
	h.Trust = e.Cfg.Trust.Pushers
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

// Signer signs the commits lockgate writes under workflow.signed:
// required, with the worker's SSH key; nil when signing is off. The key
// is looked up at the first signature: a server's hook that only reads
// the lock table needs none. A required signature without a key is an
// error then, never an unsigned commit.
func (e *Workspace) Signer(context.Context) (func(ctx context.Context, payload []byte) (string, error), error) {
	if e.Cfg.Workflow.Signed != config.SignedRequired {
		return nil, nil
	}
	var once sync.Once
	var sign gitexec.Signer
	var err error
	return func(ctx context.Context, payload []byte) (string, error) {
		once.Do(func() { sign, err = gitexec.SSHSigner(ctx, e.repo) })
		if err != nil {
			return "", Usagef("workflow.signed is required: %v", err)
		}
		return sign(ctx, payload)
	}, nil
}

// signsFor is, when lockgate signs its commits (sign is not nil), whether
// this worker's signature speaks for an event's worker: its own events,
// and those trust.pushers lets it push for. The branch writer commits
// only those of the journal, which the worktrees of a clone share: a
// commit of this worker's adding another's event is refused by the
// server, and that worker's own commands commit it.
func (e *Workspace) signsFor(sign gitexec.Signer) func(worker string) bool {
	if sign == nil {
		return nil
	}
	me := e.Me.Holder
	h := hooks.Runner{Trust: e.Cfg.Trust.Pushers}
	return func(worker string) bool { return h.Vouches([]string{me}, worker) }
}

// ServerBase is the default branch's commit a server reads its policy
// and allowed signers from ("" in an empty repository, or when the
// operator's own policy file judges).
func (e *Workspace) ServerBase(ctx context.Context) string {
	out, err := gitexec.RepoOutput(ctx, e.repo, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
