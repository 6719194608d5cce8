package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/redisstore"
)

// CloneStoreKey is the git config key that records a clone's lock store
// (`lockgate store use`). It lives in the clone's own config file, shared
// by its worktrees and read by its hooks.
const CloneStoreKey = "lockgate.store"

// Where a store choice comes from, strongest first.
const (
	FromFlag    = "flag"       // --store
	FromEnv     = "env"        // LOCKGATE_STORE
	FromClone   = "git-config" // lockgate.store
	FromPolicy  = "config"     // locks.store in .lockgate.yaml (or -c FILE)
	FromDefault = "default"
	// fromArgument is the store `store use` was given, before it is
	// recorded; no view shows it.
	fromArgument = "argument"
)

// Store kinds. Another kind is a constant here, a case in parseStore, one
// in storeChoice.id and label, and one in openStore.
const (
	KindFile  = "file"
	KindGit   = "git"
	KindRedis = "redis"
)

// storeChoice is one lock store as someone chose it.
type storeChoice struct {
	Spec   string // as written: file, redis or redis://…
	Kind   string
	URL    string // redis: the server; "" for spec redis without LOCK_REDIS_URL / REDIS_URL
	From   string // FromFlag, FromEnv, …
	Origin string // the file behind FromClone and FromPolicy
	// Remote and Ref: where a git store keeps its locks (the remote "."
	// is the repository itself).
	Remote, Ref string
}

// where is a git store's location in a sentence: "origin refs/lockgate/locks".
func (c storeChoice) where() string { return c.Remote + " " + c.Ref }

// gitWhere is where cfg's git store keeps its locks: locks.git.remote,
// else workflow.remote, else origin ("." in a bare repository that names
// no locks.git.remote: its own ref is the store), and locks.git.ref.
func (e *Workspace) gitWhere(cfg *config.Config) (remote, ref string) {
	remote = cfg.GitRemote()
	if e.repo.Toplevel == "" && cfg.Locks.Git.Remote == "" {
		remote = "."
	}
	return remote, cfg.Locks.Git.Ref
}

func (e *Workspace) parseStore(spec string) (storeChoice, error) {
	c := storeChoice{Spec: spec}
	switch {
	case spec == KindFile:
		c.Kind = KindFile
	case spec == KindGit:
		c.Kind = KindGit
	case spec == KindRedis:
		c.Kind, c.URL = KindRedis, redisstore.URLFromEnv(e.Getenv)
	case redisstore.IsURL(spec):
		c.Kind, c.URL = KindRedis, spec
	default:
		return c, Usagef("unknown store %q: want file, git, redis or a redis:// URL", redisstore.Redact(spec))
	}
	return c, nil
}

// id is equal for two choices that reach the same locks.
func (c storeChoice) id() string {
	if c.Kind == KindRedis {
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
	if c.Kind == KindRedis && c.URL != "" {
		return redisstore.Redact(c.URL)
	}
	return c.Kind
}

// label is the store in a sentence: "the file store", "redis://h:6379/0".
func (c storeChoice) label() string {
	switch c.Kind {
	case KindFile:
		return "the file store"
	case KindGit:
		return "the git store"
	}
	return c.name()
}

// source says where the choice comes from, in a sentence.
func (c storeChoice) source() string {
	switch c.From {
	case FromFlag:
		return "--store"
	case FromEnv:
		return "LOCKGATE_STORE"
	case FromClone:
		return CloneStoreKey + " in " + c.Origin
	case FromPolicy:
		return "locks.store in " + c.Origin
	case fromArgument:
		return "as given to store use"
	}
	return "the default: no " + CloneStoreKey + ", no " + config.DefaultFile
}

// ClonePrefixKey records, next to lockgate.store, the Redis key prefix of
// the clone's locks: like the store, a property of the clone, not of the
// .lockgate.yaml a worktree has checked out.
const ClonePrefixKey = "lockgate.redisPrefix"

// CloneGitRemoteKey and CloneGitRefKey record, next to lockgate.store,
// where the clone's git store keeps its locks: a branch whose
// .lockgate.yaml names another ref must not move its own checks to a lock
// table nobody else writes.
const (
	CloneGitRemoteKey = "lockgate.gitRemote"
	CloneGitRefKey    = "lockgate.gitRef"
)

// storeSetup is how a command picked its store, and what this clone's
// hooks pick.
type storeSetup struct {
	Use      storeChoice  // this command's store
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
	// gitDrift: where the policy's locks.git puts the git store's locks,
	// when it names a place other than the one the clone records ("" when
	// it does not).
	gitDrift string
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
func (e *Workspace) resolveStore(ctx context.Context) (*storeSetup, error) {
	rec, err := e.readCloneRecord(ctx)
	if err != nil {
		return nil, err
	}
	root, err := e.rootPolicy()
	if err != nil {
		return nil, err
	}
	s := &storeSetup{recorded: rec.store}
	if s.policy, err = e.policyStore(root); err != nil {
		return nil, err
	}
	recordedGit := e.placeRecordedGit(s, rec, root)
	s.policyPrefix = root.Locks.RedisPrefix
	s.policyNamed = s.policy != nil && root.Locks.StoreSet
	s.chosen = s.recorded != nil || s.policyNamed
	switch {
	case s.recorded != nil:
		s.clone = *s.recorded
	case s.policy != nil:
		s.clone = *s.policy
	default:
		s.clone = storeChoice{Spec: KindFile, Kind: KindFile, From: FromDefault}
	}
	e.pickClonePrefix(ctx, s, rec, root)
	e.pinClone(ctx, s, rec.file, recordedGit)
	if err := e.pickCommandStore(ctx, s, root); err != nil {
		return nil, err
	}
	return s, nil
}

// cloneRecord is what the clone's own config file records of its store.
type cloneRecord struct {
	file  string       // the config file
	store *storeChoice // lockgate.store; nil when unset
	// prefix is lockgate.redisPrefix; remote and ref are lockgate.gitRemote
	// and lockgate.gitRef. "" is unset.
	prefix, remote, ref string
}

// readCloneRecord reads the clone's lockgate.store, lockgate.redisPrefix,
// lockgate.gitRemote and lockgate.gitRef, its file parsed once.
func (e *Workspace) readCloneRecord(ctx context.Context) (cloneRecord, error) {
	rec := cloneRecord{file: gitexec.LocalConfigPath(e.repo)}
	vals, err := gitexec.LocalConfigs(ctx, e.repo, CloneStoreKey, ClonePrefixKey, CloneGitRemoteKey, CloneGitRefKey)
	if err != nil {
		return rec, fmt.Errorf("read the clone's store from %s: %w", rec.file, err)
	}
	if vals[0].Set {
		c, err := e.parseStore(vals[0].Value)
		if err != nil {
			return rec, Usagef("%s in %s: %v; fix it with `lockgate store use file|git|redis://…`", CloneStoreKey, rec.file, err)
		}
		c.From, c.Origin = FromClone, rec.file
		rec.store = &c
	}
	rec.prefix, rec.remote, rec.ref = vals[1].Value, vals[2].Value, vals[3].Value
	return rec, nil
}

// rootPolicy is the policy the hooks read, the root .lockgate.yaml,
// whatever -c this command got; a command that judges a change by
// -c FILE reads that file's.
func (e *Workspace) rootPolicy() (*config.Config, error) {
	if e.Opts.ConfigFile == "" || e.Judging {
		return e.Cfg, nil
	}
	return config.LoadCached(filepath.Join(e.Root(), config.DefaultFile), e.CacheDir())
}

// policyStore is the store cfg names (locks.store), or nil when cfg is
// no file but the built-in defaults.
func (e *Workspace) policyStore(cfg *config.Config) (*storeChoice, error) {
	if cfg.Path == "" {
		return nil, nil
	}
	c, err := e.parseStore(cfg.Locks.Store)
	if err != nil {
		return nil, Usagef("locks.store in %s: %v", cfg.Path, err)
	}
	c.From, c.Origin = FromPolicy, cfg.Path
	c.Remote, c.Ref = e.gitWhere(cfg)
	return &c, nil
}

// placeRecordedGit says where a recorded git store keeps its locks: where
// the clone recorded, or, recorded before locations were, where the
// policy names now (pinClone pins it). It notes in s.gitDrift a policy
// that names another place, and reports whether the clone recorded one.
func (e *Workspace) placeRecordedGit(s *storeSetup, rec cloneRecord, root *config.Config) bool {
	if s.recorded == nil || s.recorded.Kind != KindGit {
		return false
	}
	recordedGit := false
	remote, ref := e.gitWhere(root)
	s.recorded.Remote, s.recorded.Ref = remote, ref
	if rec.remote != "" && rec.ref != "" {
		s.recorded.Remote, s.recorded.Ref, recordedGit = rec.remote, rec.ref, true
	}
	// Only what the policy names can disagree: a file without
	// locks.git (a branch older than it) names nothing.
	if root.Path != "" && ((root.Locks.Git.RemoteSet && remote != s.recorded.Remote) || (root.Locks.Git.RefSet && ref != s.recorded.Ref)) {
		s.gitDrift = remote + " " + ref
	}
	return recordedGit
}

// pickClonePrefix picks the hooks' Redis key prefix: the one the clone
// recorded, else, for a Redis store, the one the policy gives (prefixOf).
func (e *Workspace) pickClonePrefix(ctx context.Context, s *storeSetup, rec cloneRecord, root *config.Config) {
	switch {
	case rec.prefix != "":
		s.clonePrefix, s.clonePrefixFrom, s.recordedPrefix = rec.prefix, ClonePrefixKey+" in "+rec.file, true
		if rec.prefix == redisstore.RepoPrefix(e.repo.CommonDir) && root.Locks.RedisPrefix == "" {
			// Recorded before the clone had a remote: other clones use
			// the remote's. Switching here would hide the locks held
			// under the recorded one; storeProblems says how to move.
			if p, from := e.prefixOf(ctx, root); strings.HasPrefix(from, fromRemote) && p != rec.prefix {
				s.remotePrefix = p
			}
		}
	case s.clone.Kind == KindRedis:
		s.clonePrefix, s.clonePrefixFrom = e.prefixOf(ctx, root)
	}
}

// pinClone records in the clone's config what it follows without having
// recorded it (unless a store is being chosen): the policy's git or Redis
// store, a recorded Redis store's prefix, a recorded git store's place.
// A clone that cannot record it goes on, warned.
func (e *Workspace) pinClone(ctx context.Context, s *storeSetup, cfgFile string, recordedGit bool) {
	switch {
	case s.recorded == nil && s.policy != nil && s.policy.Kind == KindGit && !e.Choosing:
		// As for Redis below: a worktree of a branch without the policy
		// must not fall back to a file store nobody else reads.
		rec := *s.policy
		rec.From, rec.Origin = FromClone, cfgFile
		if err := e.recordStore(ctx, rec.Spec, "", rec.Remote, rec.Ref); err != nil {
			e.Warn("warning", err.Error())
			return
		}
		e.Notify("", fmt.Sprintf("this clone now locks in %s, as %s says (recorded as %s in %s for all its worktrees)",
			rec.label(), s.policy.source(), CloneStoreKey, cfgFile))
		s.recorded, s.clone = &rec, rec
	case s.recorded == nil && s.policy != nil && s.policy.Kind == KindRedis && s.policy.URL != "" && !e.Choosing:
		// The policy's store becomes the clone's, its URL resolved: a
		// worktree of a branch without it, or a later LOCK_REDIS_URL,
		// reaches the same locks.
		rec := *s.policy
		rec.Spec, rec.From, rec.Origin = rec.URL, FromClone, cfgFile
		if err := e.recordStore(ctx, rec.Spec, s.clonePrefix, "", ""); err != nil {
			e.Warn("warning", err.Error())
			return
		}
		e.Notify("", fmt.Sprintf("this clone now locks in %s with key prefix %s, as %s says (recorded as %s and %s in %s for all its worktrees)",
			rec.label(), s.clonePrefix, s.policy.source(), CloneStoreKey, ClonePrefixKey, cfgFile))
		s.recorded, s.clone = &rec, rec
		s.clonePrefixFrom, s.recordedPrefix = ClonePrefixKey+" in "+cfgFile, true
	case s.recorded != nil && s.recorded.Kind == KindRedis && !s.recordedPrefix:
		// Recorded before prefixes were: pin the one it derives now.
		if err := gitexec.SetLocalConfig(ctx, e.repo, ClonePrefixKey, s.clonePrefix, false); err == nil {
			s.clonePrefixFrom, s.recordedPrefix = ClonePrefixKey+" in "+cfgFile, true
		}
	case s.recorded != nil && s.recorded.Kind == KindGit && !recordedGit && !e.Choosing:
		// Recorded before locations were: pin the one the policy names now.
		if err := e.recordGitWhere(ctx, s.recorded.Remote, s.recorded.Ref); err != nil {
			e.Warn("warning", err.Error())
		}
	}
}

// pickCommandStore picks this command's store and prefix: the clone's,
// unless --store, LOCKGATE_STORE or -c FILE (in a clone that recorded
// none) names another, and LOCKGATE_REDIS_PREFIX or -c FILE another
// prefix.
func (e *Workspace) pickCommandStore(ctx context.Context, s *storeSetup, root *config.Config) error {
	s.Use = s.clone
	s.prefix, s.prefixFrom = s.clonePrefix, s.clonePrefixFrom
	var err error
	switch {
	case e.Opts.Store != "":
		err = e.overrideStore(s, e.Opts.Store, FromFlag)
	case e.Getenv("LOCKGATE_STORE") != "":
		err = e.overrideStore(s, e.Getenv("LOCKGATE_STORE"), FromEnv)
	case s.recorded == nil && e.Cfg != root:
		var c *storeChoice
		if c, err = e.policyStore(e.Cfg); err == nil && c != nil {
			s.Use = *c
		}
	}
	if err != nil {
		return err
	}
	switch {
	case e.Getenv("LOCKGATE_REDIS_PREFIX") != "":
		s.prefix, s.prefixFrom = e.Getenv("LOCKGATE_REDIS_PREFIX"), "LOCKGATE_REDIS_PREFIX"
	case s.Use.Kind != KindRedis:
		s.prefix, s.prefixFrom = "", ""
	case e.Cfg != root && (e.Cfg.Locks.RedisPrefix != "" || !s.recordedPrefix):
		// -c FILE: the prefix it names, or derives when the clone has none.
		s.prefix, s.prefixFrom = e.prefixOf(ctx, e.Cfg)
	case s.prefix == "":
		s.prefix, s.prefixFrom = e.prefixOf(ctx, root)
	}
	return nil
}

// overrideStore makes spec, from --store or LOCKGATE_STORE, this
// command's store.
func (e *Workspace) overrideStore(s *storeSetup, spec, from string) error {
	c, err := e.parseStore(spec)
	if err != nil {
		return err
	}
	c.From = from
	if c.Kind == KindGit {
		// The clone's git store, when it has one: --store git names
		// the kind, not another lock table.
		c.Remote, c.Ref = e.gitWhere(e.Cfg)
		if s.clone.Kind == KindGit {
			c.Remote, c.Ref = s.clone.Remote, s.clone.Ref
		}
	}
	s.Use = c
	return nil
}

// recordStore records spec as the clone's store, prefix as its Redis key
// prefix and remote and ref as where its git store keeps the locks (""
// unsets each).
func (e *Workspace) recordStore(ctx context.Context, spec, prefix, remote, ref string) error {
	if err := gitexec.SetLocalConfig(ctx, e.repo, CloneStoreKey, spec, spec == ""); err != nil {
		return fmt.Errorf("record the store in %s: %w", CloneStoreKey, err)
	}
	if err := gitexec.SetLocalConfig(ctx, e.repo, ClonePrefixKey, prefix, prefix == ""); err != nil {
		return fmt.Errorf("record the key prefix in %s: %w", ClonePrefixKey, err)
	}
	return e.recordGitWhere(ctx, remote, ref)
}

// recordGitWhere records where the clone's git store keeps the locks (""
// unsets both).
func (e *Workspace) recordGitWhere(ctx context.Context, remote, ref string) error {
	unset := remote == "" || ref == ""
	if err := gitexec.SetLocalConfig(ctx, e.repo, CloneGitRemoteKey, remote, unset); err != nil {
		return fmt.Errorf("record the git store's remote in %s: %w", CloneGitRemoteKey, err)
	}
	if err := gitexec.SetLocalConfig(ctx, e.repo, CloneGitRefKey, ref, unset); err != nil {
		return fmt.Errorf("record the git store's ref in %s: %w", CloneGitRefKey, err)
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
func (e *Workspace) prefixOf(ctx context.Context, cfg *config.Config) (string, string) {
	if p := cfg.Locks.RedisPrefix; p != "" {
		return p, "locks.redis_prefix in " + cmp.Or(cfg.Path, config.DefaultFile)
	}
	remote := cmp.Or(cfg.Workflow.Remote, "origin")
	if out, err := gitexec.Output(ctx, e.Root(), nil, "config", "--get", "remote."+remote+".url"); err == nil {
		if u := redisstore.NormalizeRemote(string(out)); u != "" {
			return redisstore.RepoPrefix(u), fmt.Sprintf("%s%s (%s)", fromRemote, remote, redisstore.Redact(u))
		}
	}
	return redisstore.RepoPrefix(e.repo.CommonDir), fromGitDir + e.repo.CommonDir + " (no remote " + remote + ")"
}

// StoreMismatchError is a hook, check or guard told to read other locks
// than the clone's (exit 3): it cannot judge the change.
type StoreMismatchError struct{ msg string }

func (e *StoreMismatchError) Error() string { return e.msg }

// storeProblems says what is wrong with a setup: a store other than the
// hooks' (refused, unless allowed, for a command that takes locks, and
// always for one that judges changes against a store the clone chose), a
// clone at odds with its policy (refused by pre-push and by a command
// that judges a change by the policy of its base), a clone that chose
// nothing. say reports a "warning" or a "note".
func (e *Workspace) storeProblems(s *storeSetup, say func(level, msg string)) error {
	msg, fix, unset := "", "", ""
	switch {
	case s.Use.id() != s.clone.id():
		what := s.Use.source() + " " + s.Use.label()
		if s.Use.From == FromEnv {
			what = "LOCKGATE_STORE=" + s.Use.name()
		}
		msg = fmt.Sprintf("%s is not this clone's lock store: its hooks read %s (%s)", what, s.clone.label(), s.clone.source())
		fix = fmt.Sprintf("Make it this clone's store with `lockgate store use %s`", hint.Quote(s.Use.name()))
		unset = s.Use.source()
	case s.Use.Kind == KindRedis && s.prefix != s.clonePrefix:
		msg = fmt.Sprintf("%s %q is not this clone's Redis key prefix: its hooks use %q (%s)", s.prefixFrom, s.prefix, s.clonePrefix, s.clonePrefixFrom)
		fix = "Unset " + s.prefixFrom + ", or set locks.redis_prefix in " + config.DefaultFile + " for everyone and `lockgate store use` again"
		unset = s.prefixFrom
	}
	if msg != "" {
		if e.Purpose.Judges && s.chosen {
			return &StoreMismatchError{fmt.Sprintf("%s, so checking against it could pass what this clone's locks forbid.\nUnset %s, or make it this clone's store with `lockgate store use`", msg, unset)}
		}
		if e.Purpose.TakesLocks && !e.Opts.AllowStoreMismatch {
			// Not usagef: msg is whole, and shortening would cut it.
			return &UsageError{Msg: fmt.Sprintf("%s, so a lock taken there would not stop a commit here.\n%s, or add --allow-store-mismatch to take the lock there on purpose", msg, fix)}
		}
		say("warning", msg+"; locks in one do not stop commits checked against the other")
	}
	// The clone's store at odds with the policy read: what it says, how to
	// follow the policy, and which setting to change for everyone.
	// setting is what the policy would say to follow this clone instead.
	drift, follow, key, setting := "", "", "", ""
	switch {
	case s.recorded != nil && s.policy != nil && s.policyNamed && s.recorded.id() != s.policy.id() && (s.policy.Kind != KindRedis || s.policy.URL != ""):
		drift = fmt.Sprintf("this clone uses %s (%s), but %s says %s", s.recorded.label(), s.recorded.source(), s.policy.Origin, s.policy.label())
		follow, key, setting = s.policy.name(), "locks.store", "locks.store: "+s.recorded.name()
	case s.gitDrift != "":
		drift = fmt.Sprintf("this clone keeps its git store's locks on %s (%s and %s in %s), but %s says %s",
			s.recorded.where(), CloneGitRemoteKey, CloneGitRefKey, s.recorded.Origin, s.policy.Origin, s.gitDrift)
		follow, key = KindGit, "locks.git"
		setting = fmt.Sprintf("locks.git.remote: %s and locks.git.ref: %s", s.recorded.Remote, s.recorded.Ref)
	case s.recordedPrefix && s.policyPrefix != "" && s.policyPrefix != s.clonePrefix:
		origin := config.DefaultFile
		if e.Judging && s.policy != nil {
			origin = s.policy.Origin // the base's: origin/main:.lockgate.yaml
		}
		drift = fmt.Sprintf("this clone uses Redis key prefix %q (%s), but locks.redis_prefix in %s says %q", s.clonePrefix, s.clonePrefixFrom, origin, s.policyPrefix)
		follow, key, setting = s.clone.name(), "locks.redis_prefix", fmt.Sprintf("locks.redis_prefix: %q", s.clonePrefix)
	}
	switch {
	case drift == "":
	case e.Judging:
		// The policy of the change's base names the store: judging by
		// another could pass what its locks forbid.
		return &StoreMismatchError{fmt.Sprintf("%s, so a change judged by either could pass what the other's locks forbid.\nFollow the policy with `lockgate store use %s` (or `lockgate store use --unset`), or name the policy with -c FILE", drift, hint.Quote(follow))}
	case e.Purpose.Gate:
		// Either side may be the one to move: the team, by committing the
		// clone's store as its policy, or the clone, back to the policy's.
		return &StoreMismatchError{fmt.Sprintf("%s: a push is refused while they differ, as locks taken in one do not stop commits checked against the other.\nMove everyone to this clone's store: set %s in %s and commit it (`git commit -m 'lockgate: one lock store for everyone' -- %s`); or move this clone back to the policy's with `lockgate store use %s`",
			drift, setting, s.policy.Origin, hint.Quote(s.policy.Origin), hint.Quote(follow))}
	default:
		say("warning", fmt.Sprintf("%s: clones that follow the policy lock elsewhere.\nFollow the policy with `lockgate store use --unset`, or change %s for everyone", drift, key))
	}
	if s.remotePrefix != "" && s.Use.Kind == KindRedis {
		say("warning", fmt.Sprintf("this clone's Redis key prefix %q (%s) was derived from its git directory before it had a remote; other clones of it use %q, so their locks and this clone's do not meet.\nRelease this clone's locks, then `lockgate store use %s` to share theirs",
			s.clonePrefix, s.clonePrefixFrom, s.remotePrefix, hint.Quote(s.clone.name())))
	}
	if e.Purpose.TakesLocks && s.Use.From == FromDefault {
		say("note", fmt.Sprintf("no lock store chosen for this clone (no %s, no %s): locking in the file store, which only this clone's worktrees see.\nShare locks with other clones: `lockgate store use git` (through the remote) or `lockgate store use redis://HOST:PORT/DB`; keep the file store and silence this: `lockgate store use file`",
			CloneStoreKey, config.DefaultFile))
	}
	return nil
}

// StoreLabel is the store e's commands work on, in a sentence.
func (e *Workspace) StoreLabel() string {
	if e.Setup == nil {
		return "the lock store"
	}
	return e.Setup.Use.label()
}

// Root is the working tree root, or the git directory of a bare repository.
func (e *Workspace) Root() string { return cmp.Or(e.repo.Toplevel, e.repo.GitDir) }

// StoreView is one store choice as `store show` and `store use` report
// it.
type StoreView struct {
	Store  string `json:"store"` // file, or the URL without its password
	Kind   string `json:"kind"`
	Source string `json:"source"` // flag, env, git-config, config, default
	Origin string `json:"origin,omitempty"`
	// ID tells two choices of one store apart from two stores; Label and
	// SourceText say it in a sentence.
	ID         string `json:"-"`
	Label      string `json:"-"`
	SourceText string `json:"-"`
}

func storeViewOf(c *storeChoice) *StoreView {
	if c == nil {
		return nil
	}
	return &StoreView{Store: c.name(), Kind: c.Kind, Source: c.From, Origin: c.Origin,
		ID: c.id(), Label: c.label(), SourceText: c.source()}
}

// StoreReport is `store show`: the store this request uses, the clone's
// (its hooks'), the one the clone recorded and the one its policy names,
// the Redis key prefix, and what is wrong with them.
type StoreReport struct {
	// Git says where the git store keeps the locks, when it is the one
	// this request uses.
	Git        *GitStoreView `json:"git,omitempty"`
	Store      *StoreView    `json:"store"`
	Clone      *StoreView    `json:"clone"`
	Recorded   *StoreView    `json:"recorded"`
	Policy     *StoreView    `json:"policy"`
	Prefix     string        `json:"prefix"`
	PrefixFrom string        `json:"prefix_from"`
	// KeyPrefix is what the store's Redis keys start with: Prefix, in
	// braces on a cluster (a hash tag).
	KeyPrefix string `json:"key_prefix,omitempty"`
	// Replicas, when locks.redis.min_replicas asks for any, is how many
	// replicas the server that keeps the keys has now.
	Replicas *ReplicasView `json:"replicas,omitempty"`
	Warnings []string      `json:"warnings"`
	Notes    []string      `json:"notes"`
}

// ReplicasView is the replicas a Redis store's primary has now (connected,
// -1 when they could not be counted) against locks.redis.min_replicas.
type ReplicasView struct {
	Connected int `json:"connected"`
	Min       int `json:"min"`
}

// ShowStore reports how the store is picked. It opens the store only to
// count a Redis primary's replicas when locks.redis.min_replicas asks for
// some.
func (e *Workspace) ShowStore(ctx context.Context) (*StoreReport, error) {
	s, err := e.resolveStore(ctx)
	if err != nil {
		return nil, err
	}
	r := &StoreReport{Store: storeViewOf(&s.Use), Clone: storeViewOf(&s.clone), Recorded: storeViewOf(s.recorded),
		Prefix: s.prefix, PrefixFrom: s.prefixFrom, Warnings: []string{}, Notes: []string{}}
	if s.policyNamed {
		r.Policy = storeViewOf(s.policy)
	}
	if s.Use.Kind == KindRedis {
		r.KeyPrefix = redisstore.KeyPrefix(s.Use.URL, s.prefix)
	}
	if s.Use.Kind == KindGit {
		g := e.Cfg.Locks.Git
		r.Git = &GitStoreView{Remote: s.Use.Remote, Ref: s.Use.Ref, ClockSkew: g.ClockSkew.String(), MaxAge: g.MaxAge.String(), Timeout: g.Timeout.String()}
		if u, ok, err := gitexec.RemoteURL(ctx, e.repo, r.Git.Remote); err == nil && ok {
			r.Git.URL = gitexec.RedactURL(u)
		}
	}
	if err := e.storeProblems(s, func(level, msg string) {
		if level == "note" {
			r.Notes = append(r.Notes, msg)
		} else {
			r.Warnings = append(r.Warnings, msg)
		}
	}); err != nil {
		return nil, err
	}
	if want := e.Cfg.Locks.Redis.MinReplicas; s.Use.Kind == KindRedis && s.Use.URL != "" && want > 0 {
		r.Replicas = &ReplicasView{Connected: -1, Min: want}
		n, err := e.countReplicas(ctx, s)
		var usage *UsageError
		switch {
		case errors.As(err, &usage):
			// Not an outage: a mistake in the configuration, such as a
			// master the Sentinels do not know (exit 2), as every other
			// command says.
			return nil, err
		case err != nil:
			r.Warnings = append(r.Warnings, fmt.Sprintf("could not count the replicas locks.redis.min_replicas (%d) asks for: %v", want, err))
		case n < want:
			r.Replicas.Connected = n
			r.Warnings = append(r.Warnings, fmt.Sprintf("the primary of %s has %d replicas connected, fewer than locks.redis.min_replicas (%d): every acquisition waits for them and fails (exit 3).\n%s",
				s.Use.name(), n, want, hint.Line(hint.TooFewReplicas)))
		default:
			r.Replicas.Connected = n
		}
	}
	return r, nil
}

// countReplicas opens the Redis store s uses and counts the replicas of
// the server that keeps its keys.
func (e *Workspace) countReplicas(ctx context.Context, s *storeSetup) (int, error) {
	st, err := e.openStore(ctx, s.Use, s.prefix)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	rs, ok := st.(*redisstore.Store)
	if !ok {
		return 0, fmt.Errorf("store %s is no Redis store", s.Use.name())
	}
	return rs.Replicas(ctx)
}

// GitStoreView is where the git store keeps the locks and how it talks to
// the remote (locks.git).
type GitStoreView struct {
	Remote    string `json:"remote"`
	URL       string `json:"url,omitempty"`
	Ref       string `json:"ref"`
	ClockSkew string `json:"clock_skew"`
	MaxAge    string `json:"max_age"`
	Timeout   string `json:"timeout"`
}

// UseResult is what `store use` did.
type UseResult struct {
	Store    *StoreView `json:"store"`
	Previous *StoreView `json:"previous"`
	Prefix   string     `json:"prefix"`
	// Policy, after --unset, is the store the policy names (locks.store),
	// which the clone follows again; nil when it names none.
	Policy *StoreView `json:"policy,omitempty"`
}

// UseRequest is `store use`: the store to record as the clone's (file,
// git, redis or a redis:// URL), or "" to forget the clone's choice and
// follow locks.store of .lockgate.yaml.
type UseRequest struct{ Store string }

// UseStore records the clone's store, after checking that the store
// opens, and logs a store_use event.
func (e *Workspace) UseStore(ctx context.Context, req UseRequest) (*UseResult, error) {
	spec := req.Store
	e.Choosing = true // what it records is the one asked for
	// A record lockgate cannot read is what store use repairs.
	was := "unreadable"
	r := &UseResult{}
	if before, err := e.resolveStore(ctx); err == nil {
		was = fmt.Sprintf("%s (%s)", before.clone.name(), before.clone.source())
		r.Previous = storeViewOf(&before.clone)
	}
	record, remote, ref := "", "", ""
	if spec != "" {
		c, err := e.parseStore(spec)
		if err != nil {
			return nil, err
		}
		c.From = fromArgument
		// The URL as resolved now: `redis` alone would follow each
		// process's LOCK_REDIS_URL to other locks.
		record = cmp.Or(c.URL, c.Kind)
		if c.Kind == KindRedis {
			r.Prefix, _ = e.prefixOf(ctx, e.Cfg)
		}
		if c.Kind == KindGit {
			c.Remote, c.Ref = e.gitWhere(e.Cfg)
			remote, ref = c.Remote, c.Ref
		}
		st, err := e.openStore(ctx, c, r.Prefix)
		if err != nil {
			return nil, fmt.Errorf("store use %s: %w", c.name(), err)
		}
		if c.Kind == KindGit {
			// Opening asks nothing of the remote: read it once, so that a
			// clone without it (or without access) hears so now.
			if _, err := st.List(ctx); err != nil {
				_ = st.Close()
				return nil, fmt.Errorf("store use %s: %w", c.name(), err)
			}
		}
		_ = st.Close()
	}
	if err := e.recordStore(ctx, record, r.Prefix, remote, ref); err != nil {
		return nil, err
	}
	e.Choosing = false
	if err := e.Open(ctx, e.Purpose); err != nil {
		return nil, err
	}
	now := e.Setup.clone
	r.Store = storeViewOf(&now)
	if spec == "" && e.Setup.policyNamed {
		r.Policy = storeViewOf(e.Setup.policy)
	}
	details := fmt.Sprintf("%s (%s); was %s", now.name(), now.source(), was)
	if err := e.Mgr.Record(ctx, journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
		Action: journal.ActionStoreUse, Details: details}); err != nil {
		return nil, fmt.Errorf("store use: the store is recorded in the clone's config, its event is not: %w", err)
	}
	return r, nil
}

// StoreName names the store the workspace opened: file, or its URL
// without a password.
func (e *Workspace) StoreName() string {
	if e.Setup == nil { // not opened: no store chosen yet
		return ""
	}
	return e.Setup.Use.name()
}
