package cli

import (
	"net/url"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
)

// outcome classifies err for this command: the lock in its way and the
// hints that resolve it, with the user's directory, the command's wait
// and the store's record locations.
func (a *app) outcome(err error) outcome.Outcome {
	c := outcome.Context{UserDir: a.userDir(), Wait: a.waitHint}
	if a.env != nil {
		c.Now, c.Where = a.env.Now(), a.env.RecordWhere()
	}
	return outcome.Of(err, c)
}

// printOutcome prints, as hint lines on stderr, what stands in the way of
// the error o classifies and how to resolve it, with the user's options;
// it returns the lines that resolve it.
func (a *app) printOutcome(o outcome.Outcome) []string {
	hints := a.carry(o.Hints)
	if o.Detail != "" {
		a.printHints(o.Detail)
	}
	a.printHints(hints...)
	return hints
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
	if g.ConfigFile != "" && a.env != nil && a.env.ConfigPath() != "" {
		where = append(where, "-c", hint.Quote(a.env.ConfigPath()))
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
func (a *app) carryReport(r *service.Report) {
	for i := range r.Violations {
		if h := r.Violations[i].Hint; h != "" {
			r.Violations[i].Hint = a.carry([]string{h})[0]
		}
	}
}

// userDir is the user's directory for hints (see env.userDir); "" before
// the repository is known.
func (a *app) userDir() string {
	if a.env == nil {
		return ""
	}
	return a.env.UserDir()
}
