package cli

import (
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/filestore"
	"github.com/lockgate/lockgate/locks/lockkey"
)

// explain says what stands in the way of err (detail, "" when nothing
// does) and how to resolve it, as hint lines from the hint table.
func (a *app) explain(err error) (detail string, hints []string) {
	detail, hints = a.explainLock(err)
	var hookErr *HookError
	if errors.As(err, &hookErr) {
		hints = append(hints, hookErr.hint())
	}
	return detail, a.carry(hints)
}

// carry writes into the lockgate commands of hint lines the global
// options given on this command line (hint.Carry): -C, -c and --store,
// which say where it ran, and --as, --worker-type and --session, which
// say as whom. What came from the environment is not repeated: the shell
// the hint is pasted into has it still.
func (a *app) carry(lines []string) []string {
	g := a.globals
	var where, who []string
	if g.Dir != "" && a.env != nil {
		where = append(where, "-C", hint.Quote(a.env.Cwd))
	}
	if g.ConfigFile != "" && a.env != nil && a.env.Cfg.Path != "" {
		where = append(where, "-c", hint.Quote(a.env.Cfg.Path))
	}
	// A password is not printed: such a store is named in the environment.
	if u, err := url.Parse(g.Store); g.Store != "" && (err != nil || u.User == nil) {
		where = append(where, "--store", hint.Quote(g.Store))
	}
	if g.AllowStoreMismatch {
		where = append(where, "--allow-store-mismatch")
	}
	for _, o := range []struct{ flag, v string }{{"--as", g.As}, {"--worker-type", g.WorkerType}, {"--session", g.Session}} {
		if o.v != "" {
			who = append(who, o.flag, hint.Quote(o.v))
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = hint.Carry(l, where, who)
	}
	return out
}

// carryReport carries the options into the hints of a hook's report.
func (a *app) carryReport(r *hooks.Report) {
	for i := range r.Violations {
		if h := r.Violations[i].Hint; h != "" {
			r.Violations[i].Hint = a.carry([]string{h})[0]
		}
	}
}

func (a *app) explainLock(err error) (detail string, hints []string) {
	var (
		held     *locks.HeldError
		timeout  *locks.TimeoutError
		notOwner *locks.NotOwnerError
		corrupt  *locks.CorruptError
		keyErr   *lockkey.Error
	)
	switch {
	case errors.As(err, &timeout):
		return heldDetail(timeout.Held), heldHints(timeout.Held.Lock, nil, a.userDir())
	case errors.As(err, &held):
		return heldDetail(held), heldHints(held.Lock, a.waitHint, a.userDir())
	case errors.As(err, &notOwner):
		return "", []string{notOwnerHint(notOwner, a.userDir())}
	case errors.As(err, &corrupt):
		where := func(string) string { return "" }
		if a.env != nil && a.env.Store != nil {
			where = recordWhere(a.env.Store)
		}
		return "", []string{hint.CorruptLine(where, corrupt.Path, corrupt.Key, lockkey.RelArg(corrupt.Key, a.userDir()))}
	case errors.As(err, &keyErr) && keyErr.NotPermitted:
		// port:N is a lease of `ports`, which lock commands do not take.
		if p := portOf(keyErr.Input); p != "" && strings.Trim(p, "0123456789") == "" {
			return "", []string{hint.Line(hint.PortKey, p)}
		}
	}
	return "", nil
}

// recordWhere is the where of hint.CorruptLine for store: its Where for
// the file store, nil for one that clears every record by its key.
func recordWhere(store locks.Store) func(string) string {
	if _, ok := store.(*filestore.Store); ok {
		return store.Where
	}
	return nil
}

func heldDetail(h *locks.HeldError) string {
	l := h.Lock
	reason := ""
	if l.Reason != "" {
		reason = ", reason: " + l.Reason
	}
	return hint.Line(hint.HeldDetail, h.Where, l.Holder, l.HolderType, l.Session,
		stamp(l.CreatedAt), stamp(l.ExpiresAt), until(l.ExpiresAt, time.Now()), reason)
}

// heldHints resolves a lock held by someone else: wait for it (when the
// command can, as wait renders), ask its holder to give it back, or clear
// it. The user's own commands name paths relative to dir (see userDir);
// the holder's, from the top of the worktree.
func heldHints(l locks.Lock, wait func(string) string, dir string) []string {
	var out []string
	if wait != nil {
		out = append(out, wait(human(max(time.Until(l.ExpiresAt), time.Minute))))
	}
	// Port leases are never held against `lock acquire`: ports allocate
	// skips them.
	switch feature := pausedFeature(l.Key); {
	case feature != "":
		out = append(out, hint.Line(hint.AskUnpause, l.Holder, feature))
	default:
		out = append(out, hint.Line(hint.AskRelease, l.Holder, l.Key))
	}
	return append(out, hint.Line(hint.Clear, lockkey.RelArg(l.Key, dir)))
}

// notOwnerHint resolves a release or refresh of another's lock with the
// command that overrides it for that kind of key, paths relative to dir.
func notOwnerHint(e *locks.NotOwnerError, dir string) string {
	l := e.Lock
	key := lockkey.RelArg(l.Key, dir)
	port, feature := portOf(l.Key), pausedFeature(l.Key)
	switch {
	case e.Op == "refresh" && port != "":
		return hint.Line(hint.RefreshPortNotOwner, l.Holder, l.Session)
	case e.Op == "refresh":
		return hint.Line(hint.RefreshNotOwner, l.Holder, l.Session, key, key)
	case port != "":
		return hint.Line(hint.ForcePortsRelease, l.Holder, l.Session, port)
	case feature != "":
		return hint.Line(hint.ForceUnpause, l.Holder, l.Session, feature)
	default:
		return hint.Line(hint.ForceRelease, l.Holder, l.Session, key)
	}
}

// portOf is the port number of a port lease key, or "".
func portOf(key string) string {
	p, ok := strings.CutPrefix(key, service.PortNS+":")
	if !ok {
		return ""
	}
	return p
}

// pausedFeature is the feature id of a pause key, or "".
func pausedFeature(key string) string {
	if !lockkey.IsPause(key) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(key, "feature:"), ":pause")
}

// userDir is the user's directory for hints (see env.userDir); "" before
// the repository is known.
func (a *app) userDir() string {
	if a.env == nil {
		return ""
	}
	return a.env.UserDir()
}
