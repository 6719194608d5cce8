package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/locks/journal"
	"github.com/lockgate/lockgate/locks/redisstore"
)

// cloneStoreKey is the git config key that records a clone's lock store
// (`lockgate store use`). It lives in the clone's own config file, shared
// by its worktrees and read by its hooks.
const cloneStoreKey = "lockgate.store"

// Where a store choice comes from, strongest first.
const (
	fromFlag    = "flag"       // --store
	fromEnv     = "env"        // LOCKGATE_STORE
	fromClone   = "git-config" // lockgate.store
	fromPolicy  = "config"     // locks.store in .lockgate.yaml (or -c FILE)
	fromDefault = "default"
)

// Store kinds. Another kind is a constant here, a case in parseStore, one
// in storeChoice.id and label, and one in openStore.
const (
	kindFile  = "file"
	kindRedis = "redis"
)

// storeChoice is one lock store as someone chose it.
type storeChoice struct {
	Spec   string // as written: file, redis or redis://…
	Kind   string
	URL    string // redis: the server; "" for spec redis without LOCK_REDIS_URL / REDIS_URL
	From   string // fromFlag, fromEnv, …
	Origin string // the file behind fromClone and fromPolicy
}

func parseStore(spec string) (storeChoice, error) {
	c := storeChoice{Spec: spec}
	switch {
	case spec == kindFile:
		c.Kind = kindFile
	case spec == kindRedis:
		c.Kind, c.URL = kindRedis, redisstore.URLFromEnv(getenv)
	case redisstore.IsURL(spec):
		c.Kind, c.URL = kindRedis, spec
	default:
		return c, usagef("unknown store %q: want file, redis or a redis:// URL", redisstore.Redact(spec))
	}
	return c, nil
}

// id is equal for two choices that reach the same locks.
func (c storeChoice) id() string {
	if c.Kind == kindRedis {
		if id, err := redisstore.ServerID(c.URL); err == nil {
			return id
		}
		return "redis?" + c.URL // unusable: equal to nothing else
	}
	return c.Kind
}

// name is the store as output shows it: file, or the server URL without
// its password.
func (c storeChoice) name() string {
	if c.Kind == kindRedis && c.URL != "" {
		return redisstore.Redact(c.URL)
	}
	return c.Kind
}

// label is the store in a sentence: "the file store", "redis://h:6379/0".
func (c storeChoice) label() string {
	if c.Kind == kindFile {
		return "the file store"
	}
	return c.name()
}

// source says where the choice comes from, in a sentence.
func (c storeChoice) source() string {
	switch c.From {
	case fromFlag:
		return "--store"
	case fromEnv:
		return "LOCKGATE_STORE"
	case fromClone:
		return cloneStoreKey + " in " + c.Origin
	case fromPolicy:
		return "locks.store in " + c.Origin
	}
	return "the default: no " + cloneStoreKey + ", no " + config.DefaultFile
}

// clonePrefixKey records, next to lockgate.store, the Redis key prefix of
// the clone's locks: like the store, a property of the clone, not of the
// .lockgate.yaml a worktree has checked out.
const clonePrefixKey = "lockgate.redisPrefix"

// storeSetup is how a command picked its store, and what this clone's
// hooks pick.
type storeSetup struct {
	use      storeChoice  // this command's store
	clone    storeChoice  // the hooks' store: lockgate.store, else locks.store of the root .lockgate.yaml, else file
	recorded *storeChoice // lockgate.store; nil when unset
	policy   *storeChoice // locks.store of the root .lockgate.yaml; nil without one
	// policyNamed: the policy names its store (without locks.store it
	// names none); chosen: the clone's store was recorded or so named.
	policyNamed, chosen bool
	// The Redis key prefix of this command and of the hooks, and where
	// each comes from; policyPrefix is the one locks.redis_prefix of the
	// root .lockgate.yaml names ("": none).
	prefix, prefixFrom           string
	clonePrefix, clonePrefixFrom string
	policyPrefix                 string
	recordedPrefix               bool
	// remotePrefix: the prefix the clone's remote now derives, when the
	// recorded one was derived from its git directory before it had a
	// remote ("" otherwise). It is never switched to silently: the
	// clone's locks live under the recorded one.
	remotePrefix string
}

// resolveStore picks the store: --store, else LOCKGATE_STORE, else the
// clone's lockgate.store, else locks.store of the config read, else file;
// and the Redis key prefix: LOCKGATE_REDIS_PREFIX, else the clone's
// lockgate.redisPrefix, else the one of the config read (prefixOf).
// A clone that follows a Redis store of its policy records it, with its
// prefix, on first use: from then on every worktree locks there, whatever
// its checked-out .lockgate.yaml says. A hook runs the same code, so a
// command and the hooks disagree only through an override, which the
// setup shows.
func (a *app) resolveStore(ctx context.Context, e *env) (*storeSetup, error) {
	s := &storeSetup{}
	cfgFile := gitexec.LocalConfigPath(e.repo)
	v, ok, err := gitexec.LocalConfig(ctx, e.repo, cloneStoreKey)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", cloneStoreKey, err)
	}
	if ok {
		c, err := parseStore(v)
		if err != nil {
			return nil, usagef("%s in %s: %v; fix it with `lockgate store use file|redis://…`", cloneStoreKey, cfgFile, err)
		}
		c.From, c.Origin = fromClone, cfgFile
		s.recorded = &c
	}
	recPrefix, hasPrefix, err := gitexec.LocalConfig(ctx, e.repo, clonePrefixKey)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", clonePrefixKey, err)
	}
	policy := func(cfg *config.Config) (*storeChoice, error) {
		if cfg.Path == "" {
			return nil, nil
		}
		c, err := parseStore(cfg.Locks.Store)
		if err != nil {
			return nil, usagef("locks.store in %s: %v", cfg.Path, err)
		}
		c.From, c.Origin = fromPolicy, cfg.Path
		return &c, nil
	}
	root := e.cfg
	if a.globals.ConfigFile != "" {
		// Hooks read the root .lockgate.yaml, whatever -c this command got.
		if root, err = config.LoadCached(filepath.Join(e.root(), config.DefaultFile), filepath.Join(e.stateDir(), "cache")); err != nil {
			return nil, err
		}
	}
	if s.policy, err = policy(root); err != nil {
		return nil, err
	}
	s.policyPrefix = root.Locks.RedisPrefix
	s.policyNamed = s.policy != nil && root.Locks.StoreSet
	s.chosen = s.recorded != nil || s.policyNamed
	switch {
	case s.recorded != nil:
		s.clone = *s.recorded
	case s.policy != nil:
		s.clone = *s.policy
	default:
		s.clone = storeChoice{Spec: kindFile, Kind: kindFile, From: fromDefault}
	}
	switch {
	case hasPrefix && recPrefix != "":
		s.clonePrefix, s.clonePrefixFrom, s.recordedPrefix = recPrefix, clonePrefixKey+" in "+cfgFile, true
		if recPrefix == redisstore.RepoPrefix(e.repo.CommonDir) && root.Locks.RedisPrefix == "" {
			// Recorded before the clone had a remote: other clones use
			// the remote's. Switching here would hide the locks held
			// under the recorded one; storeProblems says how to move.
			if p, from := a.prefixOf(ctx, e, root); strings.HasPrefix(from, fromRemote) && p != recPrefix {
				s.remotePrefix = p
			}
		}
	case s.clone.Kind == kindRedis:
		s.clonePrefix, s.clonePrefixFrom = a.prefixOf(ctx, e, root)
	}
	if s.recorded == nil && s.policy != nil && s.policy.Kind == kindRedis && s.policy.URL != "" && !a.choosingStore {
		// The policy's store becomes the clone's, its URL resolved: a
		// worktree of a branch without it, or a later LOCK_REDIS_URL,
		// reaches the same locks.
		rec := *s.policy
		rec.Spec, rec.From, rec.Origin = rec.URL, fromClone, cfgFile
		if err := a.recordStore(ctx, e, rec.Spec, s.clonePrefix); err != nil {
			fmt.Fprintf(a.stdio.Err, "lockgate: warning: %v\n", err)
		} else {
			fmt.Fprintf(a.stdio.Err, "lockgate: this clone now locks in %s with key prefix %s, as %s says (recorded as %s and %s in %s for all its worktrees)\n",
				rec.label(), s.clonePrefix, s.policy.source(), cloneStoreKey, clonePrefixKey, cfgFile)
			s.recorded, s.clone = &rec, rec
			s.clonePrefixFrom, s.recordedPrefix = clonePrefixKey+" in "+cfgFile, true
		}
	} else if s.recorded != nil && s.recorded.Kind == kindRedis && !s.recordedPrefix {
		// Recorded before prefixes were: pin the one it derives now.
		if err := gitexec.SetLocalConfig(ctx, e.repo, clonePrefixKey, s.clonePrefix, false); err == nil {
			s.clonePrefixFrom, s.recordedPrefix = clonePrefixKey+" in "+cfgFile, true
		}
	}
	s.use = s.clone
	s.prefix, s.prefixFrom = s.clonePrefix, s.clonePrefixFrom
	override := func(spec, from string) error {
		c, err := parseStore(spec)
		if err != nil {
			return err
		}
		c.From = from
		s.use = c
		return nil
	}
	switch {
	case a.globals.Store != "":
		err = override(a.globals.Store, fromFlag)
	case getenv("LOCKGATE_STORE") != "":
		err = override(getenv("LOCKGATE_STORE"), fromEnv)
	case s.recorded == nil && e.cfg != root:
		var c *storeChoice
		if c, err = policy(e.cfg); err == nil && c != nil {
			s.use = *c
		}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case getenv("LOCKGATE_REDIS_PREFIX") != "":
		s.prefix, s.prefixFrom = getenv("LOCKGATE_REDIS_PREFIX"), "LOCKGATE_REDIS_PREFIX"
	case s.use.Kind != kindRedis:
		s.prefix, s.prefixFrom = "", ""
	case e.cfg != root && (e.cfg.Locks.RedisPrefix != "" || !s.recordedPrefix):
		// -c FILE: the prefix it names, or derives when the clone has none.
		s.prefix, s.prefixFrom = a.prefixOf(ctx, e, e.cfg)
	case s.prefix == "":
		s.prefix, s.prefixFrom = a.prefixOf(ctx, e, root)
	}
	return s, nil
}

// recordStore records spec as the clone's store and prefix as its Redis
// key prefix ("" unsets each).
func (a *app) recordStore(ctx context.Context, e *env, spec, prefix string) error {
	if err := gitexec.SetLocalConfig(ctx, e.repo, cloneStoreKey, spec, spec == ""); err != nil {
		return fmt.Errorf("record the store in %s: %w", cloneStoreKey, err)
	}
	if err := gitexec.SetLocalConfig(ctx, e.repo, clonePrefixKey, prefix, prefix == ""); err != nil {
		return fmt.Errorf("record the key prefix in %s: %w", clonePrefixKey, err)
	}
	return nil
}

// Sources of a derived prefix.
const (
	fromRemote = "derived from remote "
	fromGitDir = "derived from the git directory "
)

// prefixOf is the Redis key prefix cfg gives, and where it comes from:
// locks.redis_prefix, else one derived from the normalized URL of the
// workflow.remote remote (the same in every clone), else from the clone's
// own git directory.
func (a *app) prefixOf(ctx context.Context, e *env, cfg *config.Config) (string, string) {
	if p := cfg.Locks.RedisPrefix; p != "" {
		return p, "locks.redis_prefix in " + firstNonEmpty(cfg.Path, config.DefaultFile)
	}
	remote := firstNonEmpty(cfg.Workflow.Remote, "origin")
	if out, err := gitexec.Output(ctx, e.root(), nil, "config", "--get", "remote."+remote+".url"); err == nil {
		if u := redisstore.NormalizeRemote(string(out)); u != "" {
			return redisstore.RepoPrefix(u), fmt.Sprintf("%s%s (%s)", fromRemote, remote, redisstore.Redact(u))
		}
	}
	return redisstore.RepoPrefix(e.repo.CommonDir), fromGitDir + e.repo.CommonDir + " (no remote " + remote + ")"
}

// storeMismatchError is a hook, check or guard told to read other locks
// than the clone's (exit 3): it cannot judge the change.
type storeMismatchError struct{ msg string }

func (e *storeMismatchError) Error() string { return e.msg }

// storeProblems says what is wrong with a setup: a store other than the
// hooks' (refused, unless allowed, for a command that takes locks, and
// always for one that judges changes against a store the clone chose), a
// clone at odds with its policy, a clone that chose nothing. say reports
// a "warning" or a "note".
func (a *app) storeProblems(s *storeSetup, say func(level, msg string)) error {
	msg, fix, unset := "", "", ""
	switch {
	case s.use.id() != s.clone.id():
		what := s.use.source() + " " + s.use.label()
		if s.use.From == fromEnv {
			what = "LOCKGATE_STORE=" + s.use.name()
		}
		msg = fmt.Sprintf("%s is not this clone's lock store: its hooks read %s (%s)", what, s.clone.label(), s.clone.source())
		fix = fmt.Sprintf("Make it this clone's store with `lockgate store use %s`", hint.Quote(s.use.name()))
		unset = s.use.source()
	case s.use.Kind == kindRedis && s.prefix != s.clonePrefix:
		msg = fmt.Sprintf("%s %q is not this clone's Redis key prefix: its hooks use %q (%s)", s.prefixFrom, s.prefix, s.clonePrefix, s.clonePrefixFrom)
		fix = "Unset " + s.prefixFrom + ", or set locks.redis_prefix in " + config.DefaultFile + " for everyone and `lockgate store use` again"
		unset = s.prefixFrom
	}
	if msg != "" {
		if a.judges && s.chosen {
			return &storeMismatchError{fmt.Sprintf("%s, so checking against it could pass what this clone's locks forbid.\nUnset %s (or drop -c), or make it this clone's store with `lockgate store use`", msg, unset)}
		}
		if a.takesLocks && !a.globals.AllowStoreMismatch {
			// Not usagef: msg is whole, and shortening would cut it.
			return &UsageError{Msg: fmt.Sprintf("%s, so a lock taken there would not stop a commit here.\n%s, or add --allow-store-mismatch to take the lock there on purpose", msg, fix)}
		}
		say("warning", msg+"; locks in one do not stop commits checked against the other")
	}
	if s.recorded != nil && s.policy != nil && s.policyNamed && s.recorded.id() != s.policy.id() && (s.policy.Kind != kindRedis || s.policy.URL != "") {
		say("warning", fmt.Sprintf("this clone uses %s (%s), but %s says %s: clones that follow the policy lock elsewhere.\nFollow the policy with `lockgate store use --unset`, or change locks.store for everyone",
			s.recorded.label(), s.recorded.source(), s.policy.Origin, s.policy.label()))
	} else if s.recordedPrefix && s.policyPrefix != "" && s.policyPrefix != s.clonePrefix {
		say("warning", fmt.Sprintf("this clone uses Redis key prefix %q (%s), but locks.redis_prefix in %s says %q: clones that follow the policy lock elsewhere.\nFollow the policy with `lockgate store use --unset`, or change locks.redis_prefix for everyone",
			s.clonePrefix, s.clonePrefixFrom, config.DefaultFile, s.policyPrefix))
	}
	if s.remotePrefix != "" && s.use.Kind == kindRedis {
		say("warning", fmt.Sprintf("this clone's Redis key prefix %q (%s) was derived from its git directory before it had a remote; other clones of it use %q, so their locks and this clone's do not meet.\nRelease this clone's locks, then `lockgate store use %s` to share theirs",
			s.clonePrefix, s.clonePrefixFrom, s.remotePrefix, hint.Quote(s.clone.name())))
	}
	if a.takesLocks && s.use.From == fromDefault {
		say("note", fmt.Sprintf("no lock store chosen for this clone (no %s, no %s): locking in the file store, which only this clone's worktrees see.\nShare locks with other clones: `lockgate store use redis://HOST:PORT/DB`; keep the file store and silence this: `lockgate store use file`",
			cloneStoreKey, config.DefaultFile))
	}
	return nil
}

// storeLabel is the store e's commands work on, in a sentence.
func (e *env) storeLabel() string {
	if e.setup == nil {
		return "the lock store"
	}
	return e.setup.use.label()
}

// root is the working tree root, or the git directory of a bare repository.
func (e *env) root() string { return firstNonEmpty(e.repo.Toplevel, e.repo.GitDir) }

func storeCommand() *command {
	var unset bool
	return &command{usage: "store <command>", sub: map[string]*command{
		"show": {
			usage: "store show [--json]",
			short: "the lock store this clone uses, and where that choice comes from",
			run: func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("store show takes no arguments")
				}
				return a.showStore(ctx)
			},
		},
		"use": {
			usage: "store use file|redis|redis://… | store use --unset",
			short: "make a store this clone's (git config lockgate.store): every command and hook of every worktree uses it",
			flags: func(fs *pflag.FlagSet) {
				fs.BoolVar(&unset, "unset", false, "forget this clone's choice: follow locks.store of .lockgate.yaml")
			},
			run: func(ctx context.Context, a *app, args []string) error {
				switch {
				case unset && len(args) > 0:
					return usagef("store use: give a store or --unset, not both")
				case !unset && len(args) != 1:
					return usagef("store use: give one store: file, redis or a redis:// URL (or --unset)")
				case a.globals.Store != "":
					return usagef("store use: give the store as the argument, without --store")
				}
				spec := ""
				if !unset {
					spec = args[0]
				}
				return a.useStore(ctx, spec)
			},
		},
	}}
}

// storeView is one store choice in `store show --json`.
type storeView struct {
	Store  string `json:"store"` // file, or the URL without its password
	Kind   string `json:"kind"`
	Source string `json:"source"` // flag, env, git-config, config, default
	Origin string `json:"origin,omitempty"`
}

func view(c *storeChoice) *storeView {
	if c == nil {
		return nil
	}
	return &storeView{Store: c.name(), Kind: c.Kind, Source: c.From, Origin: c.Origin}
}

func (a *app) showStore(ctx context.Context) error {
	e, err := a.load(ctx)
	if err != nil {
		return err
	}
	s, err := a.resolveStore(ctx, e)
	if err != nil {
		return err
	}
	var warnings, notes []string
	if err := a.storeProblems(s, func(level, msg string) {
		if level == "note" {
			notes = append(notes, msg)
		} else {
			warnings = append(warnings, msg)
		}
	}); err != nil {
		return err
	}
	policy := s.policy
	if !s.policyNamed {
		policy = nil
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, map[string]any{
			"store": view(&s.use), "clone": view(&s.clone), "recorded": view(s.recorded), "policy": view(policy),
			"prefix": s.prefix, "prefix_from": s.prefixFrom,
			"warnings": nonNilS(warnings), "notes": nonNilS(notes),
		})
	}
	fmt.Fprintf(a.stdio.Out, "store:  %s\nfrom:   %s\n", s.use.name(), s.use.source())
	if s.use.Kind == kindRedis {
		fmt.Fprintf(a.stdio.Out, "prefix: %s (%s)\n", s.prefix, s.prefixFrom)
	}
	if s.use.id() != s.clone.id() {
		fmt.Fprintf(a.stdio.Out, "hooks:  %s (%s)\n", s.clone.name(), s.clone.source())
	}
	if s.policyNamed && s.use.From != fromPolicy {
		fmt.Fprintf(a.stdio.Out, "policy: %s (%s)\n", s.policy.name(), s.policy.source())
	}
	for _, w := range warnings {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s\n", w)
	}
	for _, n := range notes {
		fmt.Fprintf(a.stdio.Err, "lockgate: note: %s\n", n)
	}
	return nil
}

// useStore records spec as the clone's store ("" forgets it), after
// checking that the store opens, and logs a store_use event.
func (a *app) useStore(ctx context.Context, spec string) error {
	e, err := a.load(ctx)
	if err != nil {
		return err
	}
	a.choosingStore = true // what it records is the one asked for
	// A record lockgate cannot read is what store use repairs.
	was := "unreadable"
	var previous *storeView
	if before, err := a.resolveStore(ctx, e); err == nil {
		was = fmt.Sprintf("%s (%s)", before.clone.name(), before.clone.source())
		previous = view(&before.clone)
	}
	record, prefix := "", ""
	if spec != "" {
		c, err := parseStore(spec)
		if err != nil {
			return err
		}
		// The URL as resolved now: `redis` alone would follow each
		// process's LOCK_REDIS_URL to other locks.
		record = firstNonEmpty(c.URL, c.Kind)
		if c.Kind == kindRedis {
			prefix, _ = a.prefixOf(ctx, e, e.cfg)
		}
		st, err := a.openStore(ctx, e, c, prefix)
		if err != nil {
			return fmt.Errorf("store use %s: %w", c.name(), err)
		}
		_ = st.Close()
	}
	if err := a.recordStore(ctx, e, record, prefix); err != nil {
		return err
	}
	a.choosingStore = false
	oe, err := a.open(ctx)
	if err != nil {
		return err
	}
	now := oe.setup.clone
	details := fmt.Sprintf("%s (%s); was %s", now.name(), now.source(), was)
	if err := oe.mgr.Record(ctx, journal.Event{Worker: e.me.Holder, WorkerType: e.me.HolderType, Session: e.me.Session,
		Action: journal.ActionStoreUse, Details: details}); err != nil {
		return fmt.Errorf("store use: the store is recorded in the clone's config, its event is not: %w", err)
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, map[string]any{"store": view(&now), "previous": previous, "prefix": prefix})
	}
	if spec == "" {
		fmt.Fprintf(a.stdio.Err, "this clone follows %s again: %s\n", now.source(), now.label())
	} else {
		fmt.Fprintf(a.stdio.Err, "this clone now locks in %s (%s): every command and hook of its worktrees uses it\n", now.label(), now.source())
		if prefix != "" {
			fmt.Fprintf(a.stdio.Err, "Redis key prefix: %s (%s)\n", prefix, clonePrefixKey)
		}
	}
	return nil
}
