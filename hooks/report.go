package hooks

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
)

// Rules of a Violation, stable for scripts reading --json: the scope
// policy's (scope.RuleUserOwned, RuleCore, RuleProfile, RuleKeyRule,
// RuleProtectedBranch, RuleUnknownProfile) and the lock checks' below.
const (
	RuleLocked      = "locked"       // a path or pattern lock of another live holder
	RuleCorruptLock = "corrupt_lock" // an unreadable lock record covers the path
	RuleNotLocked   = "not_locked"   // hooks.require_lock and the committer holds no lock
	RulePaused      = "paused"       // a feature:*:pause lock of someone else
	RuleLimit       = "limit"        // too many commits or paths to check
	RuleTask        = "task"         // commit message names no held task
	// RuleWorkflowBranch: under hooks.pre_receive.verify, a push that
	// would take events off the workflow branch (a deletion, a forced
	// update) or put there a commit that is not an event commit.
	RuleWorkflowBranch = "workflow_branch"
	// RuleLockRef: a push that deletes or rewinds the git store's lock
	// table (locks.git.ref), which would hand its fences out again.
	RuleLockRef = "lock_ref"
)

// Violation is one reason a change is refused.
type Violation struct {
	Rule       string     `json:"rule"`
	Path       string     `json:"path,omitempty"`
	Key        string     `json:"key,omitempty"`
	Holder     string     `json:"holder,omitempty"`
	HolderType string     `json:"holder_type,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	Reason     string     `json:"reason"`
	Hint       string     `json:"hint,omitempty"`
	// Commit and Subject name the commit refused by a push or range
	// check; AsPusher: it carries no lockgate trailers and was judged as
	// the pusher.
	Commit   string `json:"commit,omitempty"`
	Subject  string `json:"subject,omitempty"`
	AsPusher bool   `json:"as_pusher,omitempty"`
	// Named is the worker the commit's trailers name when they were not
	// believed (another worker than the pusher, unsigned): it was judged
	// as the pusher.
	Named string `json:"trailers_name,omitempty"`
}

// Report is the outcome of one hook or check run. Its JSON form is the
// documented output of `--json` (docs/formats.md).
type Report struct {
	Hook    string `json:"hook"`
	OK      bool   `json:"ok"`
	Paths   int    `json:"paths_checked"`
	Commits int    `json:"commits_checked,omitempty"`
	// AsPusher counts the commits checked that carry no lockgate
	// trailers, judged as the pusher.
	AsPusher   int         `json:"commits_as_pusher,omitempty"`
	Violations []Violation `json:"violations"`
	Warnings   []string    `json:"warnings,omitempty"`
	// Undecided lists what `verify` could not judge from the lock log.
	Undecided []Undecided `json:"undecided,omitempty"`
	// PackagesDone are the work packages `verify` found marked done at a
	// commit of the range; PackagesDoneOutside those marked done while
	// the range's commits were made, at a commit outside its history
	// (notes: neither decides the outcome).
	PackagesDone        []PackageDone `json:"packages_done,omitempty"`
	PackagesDoneOutside []PackageDone `json:"packages_done_outside,omitempty"`
	// locksRead: Check read the locks covering every path, and held are
	// the checker's own live ones among them (for pre-commit's record).
	locksRead bool
	held      []heldLock
}

// Add records violations.
func (r *Report) Add(v ...Violation) { r.Violations = append(r.Violations, v...) }

// Finish sorts the violations into a stable order, drops repeats, and
// sets OK.
func (r *Report) Finish() {
	r.dedupe()
	sort.SliceStable(r.Violations, func(i, j int) bool {
		a, b := r.Violations[i], r.Violations[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Key < b.Key
	})
	if r.Violations == nil {
		r.Violations = []Violation{}
	}
	r.OK = len(r.Violations) == 0 && len(r.Undecided) == 0
}

// dedupe keeps the first of violations that name the same commit, path,
// rule, key and reason: the store check and verify may both find one (a
// scope rule), and two refs pushed together may carry the same commit.
func (r *Report) dedupe() {
	type id struct{ commit, path, rule, key, reason string }
	seen := make(map[id]bool, len(r.Violations))
	kept := r.Violations[:0]
	for _, v := range r.Violations {
		k := id{v.Commit, v.Path, v.Rule, v.Key, v.Reason}
		if !seen[k] {
			seen[k] = true
			kept = append(kept, v)
		}
	}
	r.Violations = kept
}

// WriteText renders the report for people: the first line says what was
// refused and why, then one line per violation, then the hints. Paths,
// names and reasons come from other workers and from git: they are
// escaped, so that none can steer the terminal. The LOCKGATE_SKIP hint is
// only offered by the hooks that honour it in the committer's own
// environment.
func (r *Report) WriteText(w io.Writer, what string) {
	r.WriteStyled(w, what, func(_, text string) string { return text })
}

// WriteStyled is WriteText with paint applied to the parts of the text a
// terminal shows in colour, by role: "error" (refused), "warning", "path",
// "rule", "holder", "expiry", "hint". paint gets escaped text and must
// return it with at most its own escape sequences added.
func (r *Report) WriteStyled(w io.Writer, what string, paint func(role, text string) string) {
	r.writePackages(w, paint)
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "lockgate: %s %s\n", paint("warning", "warning:"), safetext.Field(wn))
	}
	r.writeUndecided(w)
	if len(r.Violations) == 0 {
		return
	}
	rules := map[string]bool{}
	for _, v := range r.Violations {
		rules[v.Rule] = true
	}
	var names []string
	for k := range rules {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "lockgate: %s %s: %d violation%s (%s)\n", what, paint("error", "refused"), len(r.Violations), plural(len(r.Violations)), strings.Join(names, ", "))
	for _, v := range r.Violations {
		where := v.Path
		if where == "" {
			where = "(change)"
		}
		reason := safetext.Field(v.Reason)
		if h := safetext.Field(v.Holder); h != "" {
			reason = strings.Replace(reason, h, paint("holder", h), 1)
		}
		if v.ExpiresAt != nil {
			if exp := v.ExpiresAt.UTC().Format(time.RFC3339); strings.Contains(reason, exp) {
				reason = strings.Replace(reason, exp, paint("expiry", exp), 1)
			}
		}
		fmt.Fprintf(w, "  %s: %s: %s%s\n", paint("path", safetext.Field(safetext.Shorten(where))), paint("rule", v.Rule), reason, v.commitText(r.Hook))
	}
	seen := map[string]bool{}
	prefix := paint("hint", "hint:")
	for _, v := range r.Violations {
		if v.Hint != "" && !seen[v.Hint] {
			seen[v.Hint] = true
			hint.PrintAs(w, prefix, v.Hint)
		}
	}
	if git, ok := hint.BypassGit[r.Hook]; ok {
		hint.PrintAs(w, prefix, hint.Line(hint.BypassHook, git))
	}
}

// writePackages lists the packages verify found finished by the range's
// commits, then its notes about those marked done at a commit outside it.
func (r *Report) writePackages(w io.Writer, paint func(role, text string) string) {
	if len(r.PackagesDone) > 0 {
		fmt.Fprintf(w, "lockgate: %s: %d work package%s finished by a commit of the range:\n", r.Hook, len(r.PackagesDone), plural(len(r.PackagesDone)))
		for _, d := range r.PackagesDone {
			fmt.Fprintf(w, "  %s\n", safetext.Field(d.text()))
		}
	}
	for _, d := range r.PackagesDoneOutside {
		fmt.Fprintf(w, "lockgate: %s %s\n", paint("hint", "note:"), safetext.Field(d.outsideText()))
	}
}

// writeUndecided lists what verify could not judge, with how to complete
// the log.
func (r *Report) writeUndecided(w io.Writer) {
	if len(r.Undecided) == 0 {
		return
	}
	commits := map[string]bool{}
	for _, u := range r.Undecided {
		commits[u.Commit] = true
	}
	fmt.Fprintf(w, "lockgate: %s cannot decide: the lock log is missing or incomplete for %d commit%s\n", r.Hook, len(commits), plural(len(commits)))
	for _, u := range r.Undecided {
		fmt.Fprintf(w, "  %s\n", safetext.Field(u.text()))
	}
}

func (u Undecided) text() string {
	if u.Commit == "" {
		return u.Reason
	}
	return fmt.Sprintf("commit %s \"%s\": %s", u.Commit, u.Subject, u.Reason)
}

// WriteGitHub renders workflow annotations for GitHub Actions.
func (r *Report) WriteGitHub(w io.Writer) {
	for _, u := range r.Undecided {
		fmt.Fprintf(w, "::error title=lockgate undecided::%s\n", ghEscape(safetext.Text(u.text())))
	}
	for _, d := range r.PackagesDoneOutside {
		fmt.Fprintf(w, "::notice title=lockgate::%s\n", ghEscape(safetext.Text(d.outsideText())))
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "::warning title=lockgate::%s\n", ghEscape(safetext.Text(wn)))
	}
	for _, v := range r.Violations {
		msg := safetext.Text(v.Reason) + v.commitText(r.Hook)
		if v.Hint != "" {
			msg += " — " + safetext.Text(v.Hint)
		}
		if v.Path != "" {
			fmt.Fprintf(w, "::error file=%s,title=lockgate %s::%s\n", ghEscapeProp(safetext.Field(v.Path)), v.Rule, ghEscape(msg))
		} else {
			fmt.Fprintf(w, "::error title=lockgate %s::%s\n", v.Rule, ghEscape(msg))
		}
	}
}

// commitText names the violation's commit, for WriteText and WriteGitHub.
func (v Violation) commitText(hook string) string {
	if v.Commit == "" {
		return ""
	}
	s := fmt.Sprintf(" (commit %s \"%s\"", v.Commit, safetext.Field(v.Subject))
	switch {
	case v.AsPusher && hook == RefTxHook:
		s += ", not judged by lockgate's commit hooks: judged as its committer"
	case v.AsPusher && v.Named != "":
		s += fmt.Sprintf(", its trailers name %s, who did not push or sign it: judged as the pusher", safetext.Field(v.Named))
	case v.AsPusher:
		s += ", no lockgate trailers: judged as the pusher"
	}
	return s + ")"
}

func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghEscapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
