package cli

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/filestore"
	"github.com/lockgate/lockgate/locks/journal"
	"github.com/lockgate/lockgate/locks/lockkey"
	"github.com/lockgate/lockgate/locks/redisstore"
	"github.com/lockgate/lockgate/scope"
)

// app is one run of lockgate: parsed globals and, loaded on demand, the
// repository, its config and its lock store.
type app struct {
	stdio   Stdio
	globals Globals
	env     *env
	// waitHint, set by commands that can wait for a held lock, renders
	// the command line that waits for D.
	waitHint func(d string) string
	// partial is what a failed command did before it failed, printed with
	// the error object under --json.
	partial map[string]any
	// takesLocks is set for a command that takes locks (command.takesLocks).
	takesLocks bool
	// judges is set for a run that judges changes against the locks
	// (hooks, check, guards): it must read the clone's own locks.
	judges bool
	// choosingStore: store use is recording a store, so the policy's is
	// not recorded on the way.
	choosingStore bool
	// server: the run answers requests until stopped (lockgate mcp), so
	// its store is not given up on after one timeout.
	server bool
}

// env is what a lock command works on.
type env struct {
	repo    *gitexec.Repo
	cwd     string // absolute working directory (after -C)
	cfg     *config.Config
	store   locks.Store
	journal *journal.Journal
	mgr     *locks.Manager
	me      locks.Owner
	closers []func() error
	redis   *redisstore.Store // set when the store is Redis
	realTop string            // the worktree with symbolic links resolved, once needed
	// fold is core.ignorecase, once read (see ignoreCase).
	fold  *bool
	setup *storeSetup // how the store was picked
}

// ignoreCase reports core.ignorecase, read once per run: path and pattern
// lock keys, lock checks and scope patterns all follow it.
func (e *env) ignoreCase(ctx context.Context) (bool, error) {
	if e.fold == nil {
		v, err := gitexec.IgnoreCase(ctx, e.repo)
		if err != nil {
			return false, err
		}
		e.fold = &v
	}
	return *e.fold, nil
}

func (e *env) close() {
	for _, c := range e.closers {
		_ = c()
	}
	if e.store != nil {
		_ = e.store.Close()
	}
}

// stateDir is where lockgate keeps a clone's shared state.
func (e *env) stateDir() string { return filepath.Join(e.repo.CommonDir, "lockgate") }

// journalFile is the clone's journal; reading it needs no lock store.
func (e *env) journalFile() *journal.Journal {
	return journal.Open(filepath.Join(e.stateDir(), "events.jsonl"))
}

// load discovers the repository and reads its config, once.
func (a *app) load(ctx context.Context) (*env, error) {
	if a.env != nil {
		return a.env, nil
	}
	dir := a.globals.Dir
	if dir == "" {
		dir = "."
	}
	cwd, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve -C %s: %w", dir, err)
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, usagef("-C %s: not a directory", dir)
	}
	repo, err := gitexec.Discover(ctx, cwd)
	if err != nil {
		return nil, err
	}
	cfgPath := a.globals.ConfigFile
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
	if a.globals.ConfigFile == "" && repo.Toplevel == "" {
		cfg, err = serverConfig(ctx, repo, cfgPath)
	} else {
		cfg, err = config.LoadCached(cfgPath, filepath.Join(repo.CommonDir, "lockgate", "cache"))
	}
	if err != nil {
		return nil, err
	}
	if a.globals.ConfigFile != "" && cfg.Path == "" {
		return nil, usagef("config file %s does not exist", a.globals.ConfigFile)
	}
	me, err := a.identity()
	if err != nil {
		return nil, err
	}
	a.env = &env{repo: repo, cwd: cwd, cfg: cfg, me: me}
	return a.env, nil
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

// open loads the env and opens its lock store and journal.
func (a *app) open(ctx context.Context) (*env, error) {
	e, err := a.load(ctx)
	if err != nil {
		return nil, err
	}
	if e.mgr != nil {
		return e, nil
	}
	setup, err := a.resolveStore(ctx, e)
	if err != nil {
		return nil, err
	}
	if err := a.storeProblems(setup, func(level, msg string) { fmt.Fprintf(a.stdio.Err, "lockgate: %s: %s\n", level, msg) }); err != nil {
		return nil, err
	}
	store, err := a.openStore(ctx, e, setup.use, setup.prefix)
	if err != nil {
		return nil, err
	}
	e.store, e.setup = store, setup
	e.redis, _ = store.(*redisstore.Store)
	e.journal = e.journalFile()
	host, _ := os.Hostname()
	e.mgr = &locks.Manager{Store: store, Host: host, PID: os.Getpid()}
	sink := &auditSink{ctx: ctx, journal: e.journal, autoPush: e.cfg.Workflow.AutoPush, warn: a.stdio.Err,
		syncHint: a.carry([]string{hint.Line(hint.WorkflowSync)})[0]}
	if e.cfg.Workflow.AutoCommit {
		sink.branch = a.branchWriter(ctx, e)
	}
	e.mgr.Events = sink
	return e, nil
}

// openStore opens the store c names; a Redis store's keys start with prefix.
func (a *app) openStore(ctx context.Context, e *env, c storeChoice, prefix string) (locks.Store, error) {
	fold, err := e.ignoreCase(ctx)
	if err != nil {
		return nil, err
	}
	switch c.Kind {
	case kindFile:
		return filestore.OpenWith(filepath.Join(e.stateDir(), "locks"), filestore.Options{IgnoreCase: fold})
	case kindRedis:
		if c.URL == "" {
			return nil, usagef("store redis (%s): set LOCK_REDIS_URL (or REDIS_URL), or name the server: `lockgate store use redis://HOST:PORT/DB`", c.source())
		}
		if _, err := redisstore.ServerID(c.URL); err != nil {
			return nil, usagef("%v (%s)", err, c.source())
		}
		opts, err := redisstore.OptionsFromEnv(getenv)
		if err != nil {
			return nil, usagef("%v", err)
		}
		opts.Prefix = prefix
		opts.PoolSize = 4 // one CLI process: a few connections for parallel reads
		opts.IgnoreCase = fold
		// One timeout per command: a server that did not answer in time is
		// not asked again.
		opts.OneTimeout = !a.server
		return redisstore.Open(context.Background(), c.URL, opts)
	}
	return nil, fmt.Errorf("store kind %q not built in", c.Kind)
}

// traceID is the trace id of a W3C traceparent header value
// ("00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>"), or "" when the
// value is absent or malformed.
func traceID(tp string) string {
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

// identity resolves worker, worker type and session (docs/config.md, Identity).
func (a *app) identity() (locks.Owner, error) {
	g := a.globals
	worker := firstNonEmpty(g.As, getenv("LOCKGATE_WORKER"))
	if worker == "" {
		name := getenv("USER")
		if name == "" {
			if u, err := user.Current(); err == nil {
				name = u.Username
			}
		}
		host, _ := os.Hostname()
		worker = firstNonEmpty(name, "unknown") + "@" + firstNonEmpty(host, "localhost")
	}
	wt := firstNonEmpty(g.WorkerType, getenv("LOCKGATE_WORKER_TYPE"), scope.WorkerHuman)
	if wt != scope.WorkerHuman && wt != scope.WorkerAgent {
		return locks.Owner{}, usagef("worker type %q: want human or agent", wt)
	}
	return newOwner(worker, wt, firstNonEmpty(g.Session, getenv("LOCKGATE_SESSION"), worker))
}

// checkWorker refuses a worker id that would print as something else: one
// with surrounding whitespace, control or format characters.
func checkWorker(id string) error {
	if err := safetext.Check("worker id", id); err != nil {
		return usagef("%v", err)
	}
	if strings.TrimSpace(id) != id || id == "" {
		return usagef("worker id %q: no surrounding whitespace", id)
	}
	return nil
}

// newOwner makes the session printable and checks the worker id and
// session: their length first (locks.Owner.Check), then checkWorker.
func newOwner(worker, workerType, session string) (locks.Owner, error) {
	o := locks.Owner{Holder: worker, HolderType: workerType, Session: sanitizeSession(session)}
	if err := o.Check(); err != nil {
		return locks.Owner{}, usagef("%v", err)
	}
	if err := checkWorker(worker); err != nil {
		return locks.Owner{}, err
	}
	return o, nil
}

// sanitizeSession keeps a session id printable: anything outside
// [A-Za-z0-9._@:-] becomes '-'.
func sanitizeSession(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '.', r == '_', r == '@', r == ':', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// recover records, before a command shows the journal or the locks, what
// interrupted commands changed but did not record. Showing goes on when it
// cannot: the next change refuses until it can.
// A command that reads no lock (log) opens the store only when an intent
// is left to settle, so that it works while the store is down.
func (a *app) recover(ctx context.Context, e *env) {
	if e.mgr == nil {
		if !journal.Open(filepath.Join(e.stateDir(), "events.jsonl")).HasIntents() {
			return
		}
		if _, err := a.open(ctx); err != nil {
			fmt.Fprintf(a.stdio.Err, "lockgate: warning: the events of an interrupted lockgate command are not recorded yet (lock store: %v)\n", err)
			return
		}
	}
	if err := e.mgr.Recover(ctx); err != nil {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %v\n", err)
	}
}

// keyOptions are the lockkey rules this repository's config sets.
func (e *env) keyOptions() *lockkey.Options {
	return &lockkey.Options{
		Namespaces:      e.cfg.Locks.Namespaces,
		ContractFiles:   append(append([]string(nil), e.cfg.Contracts.OpenAPI.Files...), e.cfg.Contracts.Generated...),
		FeaturePurposes: e.cfg.Locks.FeaturePurposes,
	}
}

// parseKeys canonicalizes command-line keys. Paths and patterns are taken
// as git takes them (see cmdPath).
func (e *env) parseKeys(args []string) ([]lockkey.Key, error) {
	return e.keys(args, e.cmdPath)
}

// fileKeys canonicalizes keys read from a file (work packages, a task
// file): their paths are relative to the repository root, wherever the
// command runs.
func (e *env) fileKeys(args []string) ([]lockkey.Key, error) {
	return e.keys(args, nil)
}

// keys canonicalizes args; a path or pattern is first made repo-relative
// by toRepo (nil: it is already) and then resolved through symbolic links
// (keyPath).
func (e *env) keys(args []string, toRepo func(string) (string, error)) ([]lockkey.Key, error) {
	opts := e.keyOptions()
	out := make([]lockkey.Key, 0, len(args))
	for _, s := range args {
		if isPathArg(s) {
			var err error
			if toRepo != nil {
				if s, err = toRepo(s); err != nil {
					return nil, err
				}
			}
			if s, err = e.keyPath(s); err != nil {
				return nil, err
			}
		}
		k, err := lockkey.Parse(s, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// isPathArg reports whether a command-line key names a path or pattern:
// neither a reserved key nor one that starts like a namespace (`api:`, and
// `API:` too, which lockkey refuses with the right case).
func isPathArg(arg string) bool {
	if arg == lockkey.WorkflowKey || arg == lockkey.ClaimKey {
		return false
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		case i > 0 && c == ':':
			return false
		default:
			return true
		}
	}
	return true
}

// cmdPath makes a path or pattern given on the command line repo-relative,
// as git does: a relative one is relative to the current directory as git
// sees it (symbolic links resolved, so `..` is the real parent); an absolute
// one must lie in the worktree, reached directly or through symbolic links
// (/tmp and /private/tmp, a linked checkout). One outside the worktree is
// refused here; lockkey canonicalizes (and refuses) the rest. Without a
// worktree (a bare repository) paths are repo-relative as given.
func (e *env) cmdPath(arg string) (string, error) {
	top := e.repo.Toplevel
	if top == "" {
		return arg, nil
	}
	outside := func() error {
		return usagef("%s is outside the repository %s (paths on the command line are relative to the current directory, %s)", arg, top, e.cwd)
	}
	if filepath.IsAbs(arg) {
		rel, ok := e.inWorktree(filepath.Clean(arg))
		if !ok {
			return "", outside()
		}
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(arg, "/") {
			rel += "/" // lockkey says how to name a directory
		}
		return rel, nil
	}
	prefix := ""
	cwd, err := resolveExisting(e.cwd)
	if err != nil {
		cwd = e.cwd
	}
	if rel, ok := e.inWorktree(cwd); ok && rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	p := prefix + arg
	if c := path.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
		return "", outside()
	}
	return p, nil
}

// userDir is the directory the user works in, repo-relative with a
// trailing slash ("" at the top), for the commands hints print: the
// current directory, or, at the top, GIT_PREFIX — git runs hooks (and
// aliases) at the top of the worktree and says there where the command
// was started.
func (e *env) userDir() string {
	if e.repo.Toplevel == "" {
		return ""
	}
	cwd, err := resolveExisting(e.cwd)
	if err != nil {
		cwd = e.cwd
	}
	if rel, ok := e.inWorktree(cwd); ok && rel != "." {
		return filepath.ToSlash(rel) + "/"
	}
	p := getenv("GIT_PREFIX")
	if c := path.Clean(p); p == "" || path.IsAbs(p) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return ""
	}
	return path.Clean(p) + "/"
}

// inWorktree returns abs relative to the worktree when it lies inside it,
// as written or with symbolic links resolved. Links inside the worktree
// are left to throughLinks.
func (e *env) inWorktree(abs string) (string, bool) {
	if rel, ok := within(e.repo.Toplevel, abs); ok {
		return rel, true
	}
	top := e.realTopDir()
	if rel, ok := within(top, abs); ok {
		return rel, true
	}
	// The last element as written: a link there is a file of the
	// repository.
	if real, err := resolveExisting(filepath.Dir(abs)); err == nil {
		return within(top, filepath.Join(real, filepath.Base(abs)))
	}
	return "", false
}

// realTopDir is the worktree with symbolic links resolved.
func (e *env) realTopDir() string {
	if e.realTop == "" {
		e.realTop = e.repo.Toplevel
		if real, err := filepath.EvalSymlinks(e.repo.Toplevel); err == nil {
			e.realTop = real
		}
	}
	return e.realTop
}

// throughLinks returns the repo-relative path rel (slash-separated, clean)
// names once the symbolic links in its existing prefix are followed. Git
// refuses a path beyond a link; lockgate judges the file the link leads
// to, and refuses one that leads out of the worktree (to another worktree,
// say) or into a repository nested in it.
func (e *env) throughLinks(rel string) (string, error) {
	top := e.realTopDir()
	abs := filepath.Join(top, filepath.FromSlash(rel))
	real, err := resolveExisting(abs)
	if err != nil {
		return "", fmt.Errorf("resolve symbolic links in %s: %w", rel, err)
	}
	if real == abs {
		return rel, nil
	}
	r, ok := within(top, real)
	if !ok {
		return "", usagef("%s leads through a symbolic link to %s, outside the worktree %s: lockgate cannot vouch for it", rel, real, e.repo.Toplevel)
	}
	r = filepath.ToSlash(r)
	if d := e.otherRepo(r); d != "" {
		return "", usagef("%s leads through a symbolic link into %s, another repository or worktree (it has its own .git): lockgate cannot vouch for it", rel, d)
	}
	return r, nil
}

// otherRepo returns rel or the directory below the top holding it that
// has a .git of its own — a nested repository, submodule or worktree,
// whose files are not this worktree's — or "".
func (e *env) otherRepo(rel string) string {
	top := e.realTopDir()
	for d := rel; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(d), ".git")); err == nil {
			return d
		}
	}
	return ""
}

// keyPath follows the symbolic links in the directories a repo-relative
// path or pattern names: those before its last element and before its
// first wildcard (see throughLinks). The last element is left as written:
// a link there is a file of the repository, as git tracks it.
func (e *env) keyPath(p string) (string, error) {
	if e.repo.Toplevel == "" {
		return p, nil
	}
	if !strings.ContainsAny(p, `*?[{\`) {
		c := path.Clean(p)
		dir, base := path.Split(c)
		if dir == "" || c == ".." || strings.HasPrefix(c, "../") {
			return p, nil // lockkey judges it
		}
		real, err := e.throughLinks(path.Clean(dir))
		if err != nil || real == path.Clean(dir) {
			return p, err
		}
		out := path.Join(real, base)
		if strings.HasSuffix(p, "/") {
			out += "/" // lockkey says how to name a directory
		}
		return out, nil
	}
	segs := strings.Split(p, "/")
	var dir []string
	n := 0 // segments read
	for ; n < len(segs)-1; n++ {
		s := segs[n]
		if s == ".." || strings.ContainsAny(s, `*?[{\`) {
			break
		}
		if s != "" && s != "." {
			dir = append(dir, s)
		}
	}
	if len(dir) == 0 {
		return p, nil
	}
	d := strings.Join(dir, "/")
	real, err := e.throughLinks(d)
	if err != nil || real == d {
		return p, err
	}
	if real == "." {
		return strings.Join(segs[n:], "/"), nil
	}
	return real + "/" + strings.Join(segs[n:], "/"), nil
}

// cmdFile is a file named on the command line: relative to the current
// directory (after -C).
func (e *env) cmdFile(p string) string {
	if p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.cwd, p)
}

// ttlFor is the default TTL of a key for this worker (docs/config.md, locks.durations).
func (e *env) ttlFor(k lockkey.Key) time.Duration {
	return e.cfg.TTL(e.me.HolderType, k.Kind)
}

func canonicals(keys []lockkey.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Canonical
	}
	return out
}
