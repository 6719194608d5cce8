package verify

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/signature"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/workflow"
)

// VouchedEvents keeps, under workflow.signed: required, the events of the
// workflow branch (read from refs) whose adding commit carries a good
// signature, by the allowed signers of the base, that vouches for the
// event's worker; the others are dropped, and said so: an unsigned event
// could say anything, a release that never happened among them.
func (e Handler) VouchedEvents(ctx context.Context, refs []string, evs []journal.Event) ([]journal.Event, error) {
	if e.Cfg.Workflow.Signed != config.SignedRequired || len(evs) == 0 {
		return evs, nil
	}
	base := e.Base
	if base == "" {
		base = e.ServerBase(ctx)
	}
	paths := make([]string, len(evs))
	for i, ev := range evs {
		paths[i] = workflow.EventPath(ev.ID)
	}
	var tips []string
	for _, ref := range refs {
		if out, err := gitexec.RepoOutput(ctx, e.repo(), "rev-parse", "-q", "--verify", ref+"^{commit}"); err == nil {
			tips = append(tips, strings.TrimSpace(string(out)))
		}
	}
	added, err := gitexec.AddedBy(ctx, e.Root(), tips, paths)
	if err != nil {
		return nil, fmt.Errorf("read the lock log: %w", err)
	}
	var commits []string
	seen := map[string]bool{}
	for _, c := range added {
		if !seen[c] {
			seen[c] = true
			commits = append(commits, c)
		}
	}
	signed, err := e.SignersAt(base)(ctx, commits)
	if err != nil {
		return nil, fmt.Errorf("read the lock log: %w", err)
	}
	by := make(map[string][]string, len(paths))
	for p, c := range added {
		by[p] = signed[c]
	}
	h := hooks.Runner{Trust: e.Cfg.Trust.Pushers}
	kept := evs[:0:0]
	var dropped []journal.Event
	for i, ev := range evs {
		if h.Vouches(by[paths[i]], ev.Worker) {
			kept = append(kept, ev)
		} else {
			dropped = append(dropped, ev)
		}
	}
	if len(dropped) > 0 {
		ev := dropped[0]
		e.Warn("warning", fmt.Sprintf("%d event(s) of the lock log carry no good signature of their worker (workflow.signed: required): not believed, e.g. %s's %s of %s (event %s)",
			len(dropped), ev.Worker, ev.Action, ev.Key, ev.ID))
	}
	return kept, nil
}

// SignersAt checks commits' signatures by the allowed signers committed
// at rev (session.SignersFile), read and parsed once; a rev without the file
// allows no signer. A file that cannot be read or parsed is an error: a
// signature cannot be judged by it.
func (e Handler) SignersAt(rev string) func(ctx context.Context, shas []string) (map[string][]string, error) {
	var once sync.Once
	var signers *signature.Signers
	var err error
	return func(ctx context.Context, shas []string) (map[string][]string, error) {
		once.Do(func() { signers, err = e.readSigners(ctx, rev) })
		if err != nil {
			return nil, err
		}
		raw, err := gitexec.ReadCommitsIn(ctx, e.Root(), shas)
		if err != nil {
			return nil, fmt.Errorf("read the commits to check their signatures: %w", err)
		}
		out := make(map[string][]string, len(shas))
		for i, sha := range shas {
			if p := signers.CommitSigners(raw[i]); len(p) > 0 {
				out[sha] = p
			}
		}
		return out, nil
	}
}

// readSigners parses the allowed signers committed at rev; none when rev
// is "" or has no such file.
func (e Handler) readSigners(ctx context.Context, rev string) (*signature.Signers, error) {
	if rev == "" {
		return &signature.Signers{}, nil
	}
	data, found, err := gitexec.CommitFile(ctx, e.repo(), rev, session.SignersFile)
	if err != nil {
		return nil, fmt.Errorf("read the allowed signers: %w", err)
	}
	if !found {
		return &signature.Signers{}, nil
	}
	s, err := signature.Parse(data)
	if err != nil {
		return nil, session.Usagef("%s:%s: %v", session.Short(rev), session.SignersFile, err)
	}
	return s, nil
}
