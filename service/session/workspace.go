package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/redisstore"
	"github.com/lockgate/lockgate/scope"
)

// Options are what a front end says about one request's setting: where it
// runs, which config and lock store it reads, who it acts as, and what it
// does with the locks.
type Options struct {
	// Dir is the directory the request runs in ("" the current one);
	// ConfigFile a config file other than the repository's .lockgate.yaml.
	Dir, ConfigFile string
	// As, WorkerType and Session name who acts, over LOCKGATE_WORKER,
	// LOCKGATE_WORKER_TYPE and LOCKGATE_SESSION.
	As, WorkerType, Session string
	// Store is a lock store other than the clone's for this request
	// (--store); AllowStoreMismatch lets it take locks there.
	Store              string
	AllowStoreMismatch bool
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
	// Clock is the request's one clock: lock lifetimes, expiry, staleness
	// and what the front ends print all read it. Nil is time.Now.
	Clock func() time.Time
	// Notify receives what the request says on the side: level "warning"
	// or "note" (or "" for news), a message and hint lines. Nil drops it.
	Notify func(level, msg string, hints ...string)
	// Hook is the git hook the request runs, if it runs one. For the
	// hooks that judge the staged change (pre-commit, pre-merge-commit)
	// Load starts git listing it as soon as the repository is found, so
	// that git works while the config loads: git is most of a hook's
	// time.
	Hook string
}

// Purpose is what a request does with the lock store it opens.
type Purpose struct {
	// TakesLocks: the request takes locks, so a store the clone's hooks do
	// not read is refused. Judges: it judges changes against the locks
	// (hooks, check, guards), so it must read the clone's own. Server: it
	// answers requests until stopped (mcp), so a slow store is not given
	// up on after one timeout.
	TakesLocks, Judges, Server bool
	// KeepsLocks: it renews locks while a command runs (lock hold, work),
	// maybe for hours, so a store that did not answer once (a failover, a
	// paused server) is asked again at the next renewal.
	KeepsLocks bool
	// Cached: a pre-commit or commit-msg hook, which may judge by a git
	// store's state younger than locks.git.max_age without asking the
	// remote again.
	Cached bool
	// Gate: pre-push, the last check before a change leaves the clone. A
	// checkout whose policy names another lock store than the clone's is
	// refused there, not only warned about.
	Gate bool
	// Settles: its events must be on the remote before it exits (claim,
	// done, release, work): it calls SettleEvents, which tries a lost
	// push again and says what is left, so the push after each event
	// does not warn on its own.
	Settles bool
}

// Workspace is what a request works on: the repository, its config, the
// worker it acts as and, once opened, its lock store, journal and lock
// Manager.
type Workspace struct {
	Opts    Options
	Purpose Purpose
	// Choosing: store use is recording a store, so the policy's is not
	// recorded on the way.
	Choosing bool
	// Judging: cfg is the policy a change is judged by (the one committed
	// at its base, or -c FILE), not the checkout's: the clone's store is
	// held to it (judgeByBase).
	Judging bool
	// Base is the commit the judged policy was read from ("" for the
	// checkout's, HEAD on a server): the allowed signers are read there too.
	Base    string
	repo    *gitexec.Repo
	Cwd     string // absolute working directory (after -C)
	Cfg     *config.Config
	Store   locks.Store
	Journal *journal.Journal
	Mgr     *locks.Manager
	Me      locks.Owner
	// ServeUser is the user of lockgate serve the workspace acts as (As),
	// nil on the command line.
	ServeUser *ServeUser
	Closers   []func() error
	Redis     *redisstore.Store // set when the store is Redis
	RealTop   string            // the worktree with symbolic links resolved, once needed
	// Fold is core.ignorecase, once read (see ignoreCase).
	Fold  *bool
	Setup *storeSetup // how the store was picked
	// Staged is git's listing of the staged change, started by Load for
	// Options.Hook; the first commit hook takes it (takeStaged).
	Staged func() ([]byte, error)
	// LogFenceFloor is the highest fence the lock log names, which a
	// store's fences must stay above after it lost its state; set by the
	// service, which reads the log. Nil (a hook binary, which grants
	// nothing) leaves the store to its own floor.
	LogFenceFloor func(context.Context) (uint64, error)
	// OpenBranch opens the workflow branch, set by the service, which
	// links the workflow package. Nil (the hook binary): events are
	// recorded in the journal alone, and the next lockgate command that
	// writes the branch commits them (ErrNoBranch).
	OpenBranch func(BranchSetup) (Branch, error)
	// OpenGitStore opens the git store at remote's ref for the session's
	// purpose, and GitLockStates reads its table's states; set by the
	// service, which links the git store. Nil: a NotLinkedError.
	OpenGitStore  func(ctx context.Context, remote, ref string) (locks.Store, error)
	GitLockStates hooks.LockStates
	// CheckSignatures checks commits' SSH signatures by the allowed
	// signers committed at rev; set by the service. Nil: a
	// NotLinkedError when a signature is asked for.
	CheckSignatures func(rev string) func(ctx context.Context, shas []string) (map[string][]string, error)
}

// IgnoreCase reports core.ignorecase, read once per run: scope patterns
// and protected branches follow it. Lock keys do not: they compare folded
// (case and Unicode normal form) in every clone (lockkey.FoldCase).
func (e *Workspace) IgnoreCase(ctx context.Context) (bool, error) {
	if e.Fold == nil {
		v, err := gitexec.IgnoreCase(ctx, e.repo)
		if err != nil {
			return false, err
		}
		e.Fold = &v
	}
	return *e.Fold, nil
}

// Close closes what the workspace opened.
func (e *Workspace) Close() {
	for _, c := range e.Closers {
		_ = c()
	}
	if e.Store != nil {
		_ = e.Store.Close()
	}
}

// StateDir is where lockgate keeps a clone's shared state.
func (e *Workspace) StateDir() string { return filepath.Join(e.repo.CommonDir, "lockgate") }

// CacheDir holds what the clone keeps decoded or counted to skip work
// (docs/formats.md); it may be deleted at any time.
func (e *Workspace) CacheDir() string { return filepath.Join(e.StateDir(), "cache") }

// JournalFile is the clone's journal; reading it needs no lock store.
func (e *Workspace) JournalFile() *journal.Journal {
	return journal.Open(filepath.Join(e.StateDir(), "events.jsonl"))
}

// Load discovers the repository and reads its config and the identity
// the request acts as. Open opens the lock store.
func Load(ctx context.Context, opts Options) (*Workspace, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	e := &Workspace{Opts: opts}
	defer func() {
		if e.repo == nil { // not loaded (e.repo is set last)
			e.Close()
		}
	}()
	dir := e.Opts.Dir
	if dir == "" {
		dir = "."
	}
	cwd, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve -C %s: %w", dir, err)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, Usagef("-C %s: not a directory", dir)
	}
	repo, err := gitexec.Discover(ctx, cwd)
	if err != nil {
		return nil, err
	}
	e.listStaged(ctx, repo)
	cfgPath := e.Opts.ConfigFile
	if cfgPath == "" {
		root := repo.Toplevel
		if root == "" {
			root = repo.GitDir
		}
		cfgPath = filepath.Join(root, ".lockgate.yaml")
	} else if !filepath.IsAbs(cfgPath) {
		cfgPath = filepath.Join(cwd, cfgPath)
	}
	// Hooks and guards read the config on every commit and edit: keep it
	// decoded in the clone's state directory.
	var cfg *config.Config
	if e.Opts.ConfigFile == "" && repo.Toplevel == "" {
		cfg, err = serverConfig(ctx, repo, cfgPath)
	} else {
		cfg, err = config.LoadCached(cfgPath, filepath.Join(repo.CommonDir, "lockgate", "cache"))
	}
	if err != nil {
		return nil, err
	}
	if e.Opts.ConfigFile != "" && cfg.Path == "" {
		return nil, Usagef("config file %s does not exist", e.Opts.ConfigFile)
	}
	me, err := e.Identity("")
	if err != nil {
		return nil, err
	}
	e.repo, e.Cwd, e.Cfg, e.Me = repo, cwd, cfg, me
	return e, nil
}

// serverConfig is the policy of a repository without a working tree (a
// server's bare repository): a .lockgate.yaml its operator placed in the
// git directory, else the one committed on HEAD — the default branch as it
// stands before a push, so that a push cannot loosen the policy it is
// judged by, and every ref is judged by the same one. Neither: the
// built-in defaults. A committed policy that cannot be read or is invalid
// is an error, never the defaults.
func serverConfig(ctx context.Context, repo *gitexec.Repo, local string) (*config.Config, error) {
	if _, err := os.Stat(local); err == nil {
		return config.LoadCached(local, filepath.Join(repo.CommonDir, "lockgate", "cache"))
	}
	data, found, err := gitexec.HeadFile(ctx, repo, ".lockgate.yaml")
	if err != nil {
		return nil, fmt.Errorf("read the policy committed on the default branch: %w", err)
	}
	if !found {
		return config.Default(), nil
	}
	return config.LoadBytes("HEAD:.lockgate.yaml", data)
}

// Open opens the lock store, the journal and the Manager for purpose p,
// once: later calls return at once.
func (e *Workspace) Open(ctx context.Context, p Purpose) error {
	if e.Mgr != nil {
		return nil
	}
	e.Purpose = p
	setup, err := e.resolveStore(ctx)
	if err != nil {
		return err
	}
	if err := e.storeProblems(setup, e.Warn); err != nil {
		return err
	}
	store, err := e.openStore(ctx, setup.Use, setup.prefix)
	if err != nil {
		return err
	}
	e.Store, e.Setup = store, setup
	if setup.Use.Kind == KindGit && !e.Cfg.Workflow.AutoPushSet && setup.Use.Remote != "." {
		// Locks shared through the remote: so are their events, or
		// verify in another clone could not see them. A store that is
		// the repository's own ref (the server's bare repository, where
		// lockgate serve and pre-receive run) is the remote: its events
		// are on its own workflow branch, with nowhere to push them.
		e.Cfg.Workflow.AutoPush = true
	}
	e.Redis, _ = store.(*redisstore.Store)
	e.Journal = e.JournalFile()
	host, _ := os.Hostname()
	e.Mgr = &locks.Manager{Store: store, Host: host, PID: os.Getpid(), Now: e.Opts.Clock, StoreName: storeName(setup.Use, store),
		PerBranch: e.Cfg.Locks.PerBranch}
	if e.QueueIndexed() {
		e.Mgr.Lasting, e.Mgr.LastingRemoved = IsFinishedPackage, e.NewQueueEpoch
	}
	sink := &auditSink{ctx: ctx, journal: e.Journal, autoPush: e.Cfg.Workflow.AutoPush, notify: e.Notify, quietPush: p.Settles}
	if e.Cfg.Workflow.AutoCommit && e.OpenBranch != nil {
		sink.branch = e.BranchWriter(ctx)
	}
	e.Mgr.Events = sink
	return nil
}

// Notify passes what the request says on the side to Options.Notify.
func (e *Workspace) Notify(level, msg string, hints ...string) {
	if e.Opts.Notify != nil {
		e.Opts.Notify(level, msg, hints...)
	}
}

func (e *Workspace) Warn(level, msg string) { e.Notify(level, msg) }

// Now is the request's clock.
func (e *Workspace) Now() time.Time { return e.Opts.Clock() }

// Owner is who the request acts as, resolved once when the workspace was
// loaded (worker, type, session): front ends render it, never decide it.
func (e *Workspace) Owner() locks.Owner { return e.Me }

// LockStore is the clone's lock store as it is, below the Manager's rules
// and the audit trail: for programs that seed or inspect the table
// directly (a benchmark filling it with thousands of records). Front ends
// never call it — every change they make goes through a use case, so it is
// journaled (TestFrontEndsUseCases keeps it so).
func (e *Workspace) LockStore() locks.Store { return e.Store }

// Getenv reads the request's environment.
func (e *Workspace) Getenv(k string) string { return e.Opts.Getenv(k) }

// StateAgeNote says how old the state of the locks a request judged by
// was, when locks.git.max_age let it use one the remote confirmed
// earlier; "" otherwise.
func (e *Workspace) StateAgeNote() string {
	g, ok := e.Store.(remoteStore)
	if !ok || !e.Purpose.Cached || e.Cfg.Locks.Git.MaxAge <= 0 {
		return ""
	}
	age := g.Age(time.Now()).Round(100 * time.Millisecond)
	return fmt.Sprintf("locks as %s %s had them %s ago (locks.git.max_age: %s)", g.Remote(), g.Ref(), age, e.Cfg.Locks.Git.MaxAge)
}

// remoteStore is the git store as the session sees it: a state of a
// remote's ref, confirmed some time ago.
type remoteStore interface {
	locks.Store
	Age(now time.Time) time.Duration
	Remote() string
	Ref() string
}

// NotLinkedError is a request that needs what this binary does not link
// (the hook binary: the git store, the push of the workflow branch). The
// hook binary hands such a hook to lockgate itself (NeedsMore).
type NotLinkedError struct{ What string }

func (e *NotLinkedError) Error() string {
	return "this lockgate binary does not link " + e.What + ": run the hook with `lockgate hook`"
}

// NeedsMore reports whether err is of a request that needs what the
// binary does not link: a NotLinkedError, a push to the git store's ref
// with no reader of its states (hooks.ErrNoLockStates), the workflow
// branch unopened (ErrNoBranch).
func NeedsMore(err error) bool {
	var nl *NotLinkedError
	return errors.As(err, &nl) || errors.Is(err, hooks.ErrNoLockStates) || errors.Is(err, ErrNoBranch)
}

// storeName names the store in events: its kind, and where a shared one is.
func storeName(c storeChoice, s locks.Store) string {
	if g, ok := s.(remoteStore); ok {
		return "git " + g.Remote() + " " + g.Ref()
	}
	return c.name()
}

// openStore opens the store c names; a Redis store's keys start with prefix.
func (e *Workspace) openStore(ctx context.Context, c storeChoice, prefix string) (locks.Store, error) {
	// Path and pattern keys are folded whatever core.ignorecase says (see
	// lockkey.FoldCase): clones that differ in it share one store.
	switch c.Kind {
	case KindFile:
		return filestore.Open(filepath.Join(e.StateDir(), "locks"))
	case KindGit:
		if e.OpenGitStore == nil {
			return nil, &NotLinkedError{What: "the git store"}
		}
		return e.OpenGitStore(ctx, c.Remote, c.Ref)
	case KindRedis:
		if c.URL == "" {
			return nil, Usagef("store redis (%s): set LOCK_REDIS_URL (or REDIS_URL), or name the server: `lockgate store use redis://HOST:PORT/DB`", c.source())
		}
		if _, err := redisstore.ServerID(c.URL); err != nil {
			return nil, Usagef("%v (%s)", err, c.source())
		}
		opts, err := redisstore.OptionsFromEnv(e.Getenv)
		if err != nil {
			return nil, Usagef("%v", err)
		}
		opts.Prefix = prefix
		opts.PoolSize = 4 // one CLI process: a few connections for parallel reads
		// One timeout per command: a server that did not answer in time is
		// not asked again.
		opts.OneTimeout = !e.Purpose.Server && !e.Purpose.KeepsLocks
		opts.FenceFloor = e.LogFenceFloor
		opts.MinReplicas = e.Cfg.Locks.Redis.MinReplicas
		st, err := redisstore.Open(context.Background(), c.URL, opts)
		var unknown *redisstore.UnknownMasterError
		if errors.As(err, &unknown) {
			// The Sentinels answered: the URL names a master they do not
			// have, which no retry mends.
			return nil, Usagef("%v (%s)", err, c.source())
		}
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	return nil, fmt.Errorf("store kind %q not built in", c.Kind)
}

// TraceID is the trace id of a W3C traceparent header value
// ("00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>"), or "" when the
// value is absent or malformed.
func TraceID(tp string) string {
	parts := strings.Split(strings.TrimSpace(tp), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || len(parts[1]) != 32 || len(parts[2]) != 16 {
		return ""
	}
	id := strings.ToLower(parts[1])
	if strings.Trim(id, "0123456789abcdef") != "" || strings.Trim(id, "0") == "" {
		return ""
	}
	return id
}

// owner resolves the worker, worker type and session opts name
// (docs/config.md, Identity), without a repository.
func owner(opts Options) (locks.Owner, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	e := &Workspace{Opts: opts}
	return e.Identity("")
}

// Identity resolves who a request acts as; it is the one place lockgate
// decides it (docs/config.md, Identity). The worker is --as, else
// LOCKGATE_WORKER, else user@host; the worker type and session likewise
// from the options, then the environment. pusher is who a server's hook
// is told pushed (hooks.identity_env), "" elsewhere: it is then the
// worker and its session, whatever the options say.
func (e *Workspace) Identity(pusher string) (locks.Owner, error) {
	g := e.Opts
	worker := cmp.Or(pusher, g.As, e.Getenv("LOCKGATE_WORKER"))
	if worker == "" {
		name := e.Getenv("USER")
		if name == "" {
			if u, err := user.Current(); err == nil {
				name = u.Username
			}
		}
		host, _ := os.Hostname()
		worker = cmp.Or(name, "unknown") + "@" + cmp.Or(host, "localhost")
	}
	wt := cmp.Or(g.WorkerType, e.Getenv("LOCKGATE_WORKER_TYPE"), scope.WorkerHuman)
	session := cmp.Or(g.Session, e.Getenv("LOCKGATE_SESSION"), worker)
	if pusher != "" {
		session = pusher
	}
	return NewOwner(worker, wt, session)
}

// NewOwner is the worker worker of type workerType in session, the
// session made one lockgate writes (hooks.SessionOf), or a *UsageError
// when hooks.CheckOwner, the rule commits' trailers are held to too,
// refuses it.
func NewOwner(worker, workerType, session string) (locks.Owner, error) {
	o := locks.Owner{Holder: worker, HolderType: workerType, Session: hooks.SessionOf(session)}
	if err := hooks.CheckOwner(o); err != nil {
		return locks.Owner{}, Usagef("%v", err)
	}
	return o, nil
}

// RecoverInterrupted records, before a command shows the journal or the
// locks, what interrupted commands changed but did not record. Showing
// goes on when it cannot: the next change refuses until it can.
// A command that reads no lock (log) opens the store only when an intent
// is left to settle, so that it works while the store is down.
func (e *Workspace) RecoverInterrupted(ctx context.Context) {
	if e.Mgr == nil {
		if !journal.Open(filepath.Join(e.StateDir(), "events.jsonl")).HasIntents() {
			return
		}
		if err := e.Open(ctx, e.Purpose); err != nil {
			e.Warn("warning", fmt.Sprintf("the events of an interrupted lockgate command are not recorded yet (lock store: %v)", err))
			return
		}
	}
	if err := e.Mgr.Recover(ctx); err != nil {
		e.Warn("warning", err.Error())
	}
}

// GitDir is the git directory of the request's worktree.
func (e *Workspace) GitDir() string { return e.repo.GitDir }

// CommonDir is the git directory every worktree of the clone shares.
func (e *Workspace) CommonDir() string { return e.repo.CommonDir }

// WorkTree is the repository's working tree, "" for a bare repository.
func (e *Workspace) WorkTree() string { return e.repo.Toplevel }

// Dir is the absolute directory the request runs in (after -C).
func (e *Workspace) Dir() string { return e.Cwd }

// ConfigPath is the config file the request reads, "" when it reads the
// built-in defaults.
func (e *Workspace) ConfigPath() string { return e.Cfg.Path }
