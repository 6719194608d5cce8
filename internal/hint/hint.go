package hint

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockgate/lockgate/internal/safetext"
)

// ID names one hint of the table.
type ID int

// The hints. In a template, text between backquotes is a command: a %s
// there is shell-quoted; elsewhere it is escaped for the terminal. A
// []string argument fills one %s with several words. %k is a %s for
// keys, written last in its command after any flags: when one of them
// starts with "-", "--" goes before them so that it is not read as a flag.
const (
	HeldDetail ID = iota
	WaitAcquire
	WaitPackage
	WaitClaim
	AskRelease
	AskFinishPackage
	AskUnpause
	Clear
	ForceRelease
	ForceUnpause
	ForcePortsRelease
	PortKey
	RefreshNotOwner
	RefreshPortNotOwner
	Corrupt
	CorruptRecord
	PathLocked
	PathNotLocked
	KeyRule
	KeyHeld
	Paused
	TaskTrailer
	TaskClaim
	UserOwned
	OutsideProfile
	ProtectedBranch
	MaxCommits
	MaxPaths
	BypassHook
	HookFailed
	HookFailedNoBypass
	HookFailedStore
	HookFailedStoreNoBypass
	WorkflowSync
	MCPTimeout
	MCPHeld
	MCPPortEnv
	MCPNotOwner
	MCPRateLimited
	MCPCorrupt
	MCPCorruptRecord
	MCPLockLost
	Contended
	MCPContended
	Reacquire
	TaskMessageTooLarge
	MadeWhileHeld
	MadeUnlocked
	LogFetch
	WorkflowAppendOnly
	WorkflowEventsOnly
	LockRefForward
	TooFewReplicas
	NotRepo
	PusherTrailers
	LockRefLogged
	SignCommits
	ForceNeedsAdmin
	ForceAgentHuman
)

// Table is every hint, by ID.
var Table = map[ID]string{
	HeldDetail:          "lock %s: holder %s (%s), session %s, created %s, expires %s (%s)%s",
	WaitAcquire:         "wait for it: `lockgate lock acquire --wait %s %k`",
	WaitPackage:         "wait for it: `lockgate lock acquire --wait %s --package %s`",
	WaitClaim:           "wait for it: `lockgate claim --wait %s %k`",
	AskRelease:          "ask %s to run `lockgate lock release %k`",
	AskFinishPackage:    "it goes back with %s's package %s: ask them to run `lockgate done %k` when it is done, or to run `lockgate release-package %k` to give it back",
	AskUnpause:          "ask %s to run `lockgate unpause %k`",
	Clear:               "or remove it (logged): `lockgate lock clear --force %k`",
	ForceRelease:        "only %s (session %s) may release it; to override: `lockgate lock release --force %k` (logged)",
	ForceUnpause:        "only %s (session %s) may unpause it; to override: `lockgate unpause --force %k` (logged)",
	ForcePortsRelease:   "only %s (session %s) may release it; to override: `lockgate ports release --force %k` (logged)",
	PortKey:             "ports are leased, not locked: see them with `lockgate ports list`, give one back with `lockgate ports release %s`",
	RefreshNotOwner:     "only %s (session %s) may refresh it; to take it over, remove it (logged): `lockgate lock clear --force %k`, then `lockgate lock acquire %k`",
	RefreshPortNotOwner: "only %s (session %s) may refresh it; lease a port of your own: `lockgate ports allocate`",
	Corrupt:             "inspect %s, then remove it with `lockgate lock clear --force %k`",
	CorruptRecord:       "inspect %s, then remove it with `lockgate lock clear --force --record %s`",
	PathLocked:          "wait for %s to run `lockgate lock release %k`, or take it when free: `lockgate lock acquire --wait %s %k`",
	PathNotLocked:       "lock it first: `lockgate lock acquire %k`",
	Reacquire:           "it expired or was never taken: take it again with `lockgate lock acquire %k`",
	Contended:           "other clones kept changing the locks at the same moment; nothing was changed: run the command again",
	KeyRule:             "take the key first: `lockgate lock acquire %k`",
	KeyHeld:             "%s holds it until %s: ask them to release it, or take it when free: `lockgate lock acquire --wait %s %k`",
	Paused:              "wait with `lockgate pause wait %k`; %s resumes with `lockgate unpause %k`",
	TaskTrailer:         "add a trailer \"Task: <ID>\" or put the task id in the subject",
	TaskClaim:           "claim it first: `lockgate lock acquire %k`",
	UserOwned:           "ask a person to make this change",
	OutsideProfile:      "leave this path out of the change, or commit it outside the profile",
	ProtectedBranch:     "commit on a branch and merge it through review",
	MaxCommits:          "push fewer commits at once, or raise hooks.pre_push.max_commits",
	MaxPaths:            "push fewer changes at once, or raise hooks.pre_push.max_paths",
	// The … stands for the arguments of the git command that was refused.
	BypassHook:         "to bypass in an emergency: `LOCKGATE_SKIP=1 git %s …` (the bypass is logged)",
	HookFailed:         "lockgate fails closed: fix the cause, or bypass once: `LOCKGATE_SKIP=1 git %s …` (logged)",
	HookFailedNoBypass: "lockgate fails closed: fix the cause",
	// The lock store could not be reached: hooks may warn instead.
	HookFailedStore:         "lockgate fails closed: fix the cause, set hooks.on_store_unavailable: warn for an unreachable store, or bypass once: `LOCKGATE_SKIP=1 git %s …` (logged)",
	HookFailedStoreNoBypass: "lockgate fails closed: fix the cause, or set hooks.on_store_unavailable: warn for an unreachable store",
	WorkflowSync:            "`lockgate workflow sync` commits what is kept in the journal",
	MCPTimeout:              "still held after %s; retry later, or ask %s to release it",
	MCPHeld:                 "wait for it (wait_seconds), work on something else, or ask %s to release it; an operator can remove it with `lockgate lock clear --force %k` (logged)",
	MCPPortEnv:              "ports are leased with the allocate_ports tool, not locked as env: keys",
	MCPNotOwner:             "only %s (session %s) may %s it",
	MCPRateLimited:          "at most %s acquisitions per %s per session; retry after the window",
	MCPCorrupt:              "an operator inspects %s and removes it with `lockgate lock clear --force %k`",
	MCPCorruptRecord:        "an operator inspects %s and removes it with `lockgate lock clear --force --record %s`",
	MCPLockLost:             "the lock expired or was taken over: acquire it again before going on",
	MCPContended:            "other clones kept changing the locks at the same moment; nothing was changed: call again",
	TaskMessageTooLarge:     "shorten the commit message: lockgate reads at most 1 MiB of it",
	// A commit lockgate verify refuses is made already: what is left is
	// to review it, or revert it; no command of lockgate's undoes it.
	MadeWhileHeld: "have %s review commit %s, and revert it (git revert) if it must not stay",
	MadeUnlocked:  "review commit %s, and revert it (git revert) if it must not stay",
	LogFetch:      "run it again with --fetch, which fetches %s from %s",
	// The server refuses a push that would take events off the workflow
	// branch, or put anything but events on it.
	WorkflowAppendOnly: "the workflow branch only grows: fetch it, merge it into yours and push without force, as lockgate workflow sync --push does",
	WorkflowEventsOnly: "push to the workflow branch only the commits lockgate writes there (lockgate workflow sync --push); keep other files and commits off it",
	// A grant fewer replicas confirmed than locks.redis.min_replicas
	// asks for was undone.
	TooFewReplicas: "bring a replica of the primary back (store show counts them), or lower locks.redis.min_replicas in .lockgate.yaml",
	NotRepo:        "run it inside a git repository's work tree, or name one with -C DIR",
	// Signed mode: a commit, event or state lacks its worker's signature.
	SignCommits: "sign with the worker's SSH key listed in .lockgate/allowed_signers: git config gpg.format ssh, git config user.signingkey KEY, git config commit.gpgsign true (lockgate init --signed sets them), then make the commit again",
	// A state of the lock table that ends a live lock unannounced.
	LockRefLogged: "change the lock table only with lockgate's commands (lockgate lock release, lockgate lock clear): each state they write names the locks it ends",
	// A commit's trailers name another worker than its pusher.
	PusherTrailers: "let that worker push its own commits, have it sign them (git commit -S with its key in .lockgate/allowed_signers), or name the pusher in trust.pushers of .lockgate.yaml on the default branch",
	// A forced removal a rule of the roles refused.
	ForceNeedsAdmin: "an operator of the server can add an admin, who may clear it: `lockgate serve user add NAME --admin`; or ask %s to release it",
	ForceAgentHuman: "ask %s to run `lockgate lock release %k`, or let agents clear people's locks with locks.agents_clear_human: true in the committed .lockgate.yaml",
	LockRefForward:  "the git store's lock table only moves forward: each state lockgate pushes replaces the last with a higher generation, and a lost state is put back on top of what the remote has, as the git store's error says",
}

// CorruptLine is the hint for the unreadable record at path, of key (""
// when unknown; arg is key as the user types it): cleared by key when the
// key names that record, else by the record file. where maps a key to its
// record's place in the file store, whose records a key may not name (a
// misplaced or foreign file); nil for a store that clears every record by
// its key (Redis: a key that cannot be typed plainly is quoted).
func CorruptLine(where func(string) string, path, key, arg string) string {
	if key != "" && (where == nil || where(key) == path && safetext.Field(key) == key) {
		return Line(Corrupt, path, arg)
	}
	return Line(CorruptRecord, path, path)
}

// BypassGit is the git command whose hook honours LOCKGATE_SKIP, by hook
// name; hooks not listed (pre-receive runs on the server, check in CI,
// guards for agents) have no bypass to offer.
var BypassGit = map[string]string{
	"pre-commit":       "commit",
	"commit-msg":       "commit",
	"pre-merge-commit": "merge",
	"pre-push":         "push",
	// The reference-transaction hook judges what a commit, merge,
	// cherry-pick or rebase puts on a branch.
	"reference-transaction": "commit",
}

// Line renders hint id with args: strings, []string, or values printed
// with %v.
func Line(id ID, args ...any) string {
	tmpl, ok := Table[id]
	if !ok {
		panic(fmt.Sprintf("hint %d is not in the table", id)) // a programming error
	}
	var b strings.Builder
	inCmd := false
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case c == '`':
			inCmd = !inCmd
			b.WriteByte(c)
		case c == '%' && i+1 < len(tmpl) && (tmpl[i+1] == 's' || tmpl[i+1] == 'k'):
			keys := tmpl[i+1] == 'k'
			i++
			if len(args) == 0 {
				b.WriteString("%!s(MISSING)")
				continue
			}
			b.WriteString(fill(args[0], inCmd, keys))
			args = args[1:]
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func fill(arg any, inCmd, keys bool) string {
	var words []string
	switch v := arg.(type) {
	case []string:
		words = v
	case string:
		words = []string{v}
	default:
		words = []string{fmt.Sprint(v)}
	}
	dash := false
	for i, w := range words {
		dash = dash || strings.HasPrefix(w, "-")
		if inCmd {
			words[i] = Quote(w)
		} else {
			words[i] = safetext.Field(w)
		}
	}
	if inCmd && keys && dash {
		words = append([]string{"--"}, words...)
	}
	return strings.Join(words, " ")
}

// Carry writes the global options of the command that printed line into
// the lockgate commands of line, after "lockgate", so that they run as
// pasted into the same shell: where (-C, -c, --store: where it ran) into
// each, who (--as, --worker-type, --session) into those that act as a
// worker, not those that only look (lock list, ports list, pause wait,
// workflow sync). A command the hint asks another worker to run (after
// "to run " or "resumes with ") gets neither: it runs in that worker's
// shell and checkout, as that worker. Options are shell-quoted words.
func Carry(line string, where, who []string) string {
	if len(where)+len(who) == 0 {
		return line
	}
	const cmd = "`lockgate "
	var b strings.Builder
	for {
		i := strings.Index(line, cmd)
		if i < 0 {
			break
		}
		head, rest := line[:i+len(cmd)], line[i+len(cmd):]
		b.WriteString(head)
		if !strings.HasSuffix(line[:i], " to run ") && !strings.HasSuffix(line[:i], " resumes with ") {
			opts := where
			if !onlyLooks(rest) {
				opts = append(append([]string(nil), where...), who...)
			}
			for _, o := range opts {
				b.WriteString(o + " ")
			}
		}
		line = rest
	}
	b.WriteString(line)
	return b.String()
}

// onlyLooks reports whether the lockgate command cmd (after "lockgate ")
// reads without acting as a worker: who runs it does not matter.
func onlyLooks(cmd string) bool {
	for _, c := range []string{"lock list", "ports list", "pause wait ", "workflow sync"} {
		if strings.HasPrefix(cmd, c) {
			return true
		}
	}
	return false
}

// PrintAs writes lines as hints, one line each after prefix: the word
// "hint:", coloured for a terminal or not.
func PrintAs(w io.Writer, prefix string, lines ...string) {
	for _, l := range lines {
		fmt.Fprintf(w, "%s %s\n", prefix, safetext.Text(l))
	}
}

// Quote quotes s for a command the user can paste into a POSIX shell. A
// value holding characters that must not reach the terminal raw is written
// as $'…' with escapes, which bash, zsh and ksh read back exactly.
func Quote(s string) string {
	if safetext.Field(s) != s {
		return "$'" + safetext.Field(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)) + "'"
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return safetext.ShellQuote(s)
}
