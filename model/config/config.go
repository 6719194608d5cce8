package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/scope"
)

// DefaultFile is the policy file's name at the repository root.
const DefaultFile = ".lockgate.yaml"

// Duration is a duration written as a string in YAML ("8h", "30m", "2d",
// "90s"). Bare numbers are refused: a unit is always required.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as a Go duration string (also used for JSON).
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a duration string ("90m", "2d", "1w").
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Config is the parsed `.lockgate.yaml` (docs/config.md).
type Config struct {
	Version      int             `yaml:"version"`
	Locks        LocksConfig     `yaml:"locks"`
	WorkPackages string          `yaml:"work_packages"`
	Contracts    ContractsConfig `yaml:"contracts"`
	Scope        ScopeConfig     `yaml:"scope"`
	Hooks        HooksConfig     `yaml:"hooks"`
	Workflow     WorkflowConfig  `yaml:"workflow"`
	Journal      JournalConfig   `yaml:"journal"`
	Planner      PlannerConfig   `yaml:"planner"`
	MCP          MCPConfig       `yaml:"mcp"`
	Trust        TrustConfig     `yaml:"trust"`

	// Path is the file the configuration was loaded from; "" for defaults.
	Path string `yaml:"-"`

	pos map[string]int // value path -> line in Path, for later validation
}

// LocksConfig is the `locks:` section.
type LocksConfig struct {
	// Store is "file", "git" (a ref of the git remote), "redis" (URL from
	// LOCK_REDIS_URL / REDIS_URL) or a Redis URL (redis://, rediss://,
	// redis+sentinel://, redis+cluster://, rediss+ of either).
	Store        string `yaml:"store"`
	StaleMinutes int    `yaml:"stale_minutes"`
	// ReadOnly keeps the files another worker holds read-only in each
	// worktree, and .gitattributes' lockable files unless locked by the
	// worker (docs/locks.md).
	ReadOnly bool `yaml:"read_only"`
	// PerBranch lets a lock name the branch it holds on (lockkey.BranchKey);
	// a lock without one holds on every branch (docs/locks.md).
	PerBranch bool `yaml:"per_branch"`
	// ReleaseOnMerge releases a branch's locks once its holder's commits
	// that touched the locked paths are on the branch it protects.
	ReleaseOnMerge bool `yaml:"release_on_merge"`
	// AgentsClearHuman lets an agent force away a lock a person (a human
	// worker) holds: off, a person's lock ends only by the person, a
	// person forcing it, or its expiry, so that no agent undoes a
	// person's claim on its own (docs/locks.md).
	AgentsClearHuman bool `yaml:"agents_clear_human"`
	// UseGlobalClaimLock is the file's use_global_claim_lock: see
	// GlobalClaimLock.
	UseGlobalClaimLock bool     `yaml:"use_global_claim_lock"`
	Namespaces         []string `yaml:"namespaces"`
	// Durations maps worker type (human|agent) to lock kind
	// (activity|task) to default TTL.
	Durations map[string]map[lockkey.Kind]Duration `yaml:"durations"`
	// FeaturePurposes are the purposes allowed in feature:<id>:<purpose>.
	FeaturePurposes []string `yaml:"feature_purposes"`
	// RedisPrefix starts every Redis key of this repository's locks;
	// empty: derived from the repository's remote URL.
	RedisPrefix string `yaml:"redis_prefix"`
	// Git configures the git store.
	Git GitStoreConfig `yaml:"git"`
	// Redis configures the Redis store.
	Redis RedisStoreConfig `yaml:"redis"`
	// StoreSet: the file names locks.store (Store is "file" either way).
	StoreSet bool `yaml:"-"`
	// ClaimLockSet: the file names locks.use_global_claim_lock.
	ClaimLockSet bool `yaml:"-"`
}

// GlobalClaimLock reports whether `claim` without an id chooses a package
// holding the reserved `claim` lock: as the file says, else off. A claim
// takes its package's task record and locks all or none — in one
// compare-and-swap on the git store, in one order of keys elsewhere, so
// that of two claimers racing for overlapping packages one always wins —
// which already gives each package to one claimer and keeps two claims
// from overlapping; the lock would serialise every claimer of the store
// and cost each claim two more changes of it (docs/queue.md).
func (l *LocksConfig) GlobalClaimLock() bool {
	return l.ClaimLockSet && l.UseGlobalClaimLock
}

// RedisStoreConfig is `locks.redis`: what the Redis store asks of the
// deployment it uses.
type RedisStoreConfig struct {
	// MinReplicas is the number of replicas that must confirm each grant
	// before it is reported (Redis's WAIT); a grant fewer confirm in time
	// is undone and refused as the store being unavailable. 0 (the
	// default) waits for none.
	MinReplicas int `yaml:"min_replicas"`
}

// RedisURLSchemes are the schemes a locks.store URL of the Redis store may
// have.
var RedisURLSchemes = []string{"redis://", "rediss://", "redis+sentinel://", "rediss+sentinel://", "redis+cluster://", "rediss+cluster://"}

// GitStoreConfig is `locks.git`: where the git store keeps the locks and
// how it talks to the remote.
type GitStoreConfig struct {
	// Remote is the remote's name or URL; "" is workflow.remote.
	Remote string `yaml:"remote"`
	// Ref is the remote ref holding the lock table.
	Ref string `yaml:"ref"`
	// ClockSkew is how long past its expiry a lock still counts as held
	// when a writer decides to take it over.
	ClockSkew Duration `yaml:"clock_skew"`
	// MaxAge lets hooks use a state of the locks the remote confirmed
	// less than MaxAge ago without asking again (0: always ask).
	MaxAge Duration `yaml:"max_age"`
	// Timeout bounds each exchange with the remote.
	Timeout Duration `yaml:"timeout"`
	// RefSet: the file names locks.git.ref; RemoteSet: it names
	// locks.git.remote or workflow.remote. A file that names neither does
	// not disagree with the location a clone recorded for its git store.
	RefSet    bool `yaml:"-"`
	RemoteSet bool `yaml:"-"`
}

// GitRemote is the remote the git store uses.
func (c *Config) GitRemote() string {
	if c.Locks.Git.Remote != "" {
		return c.Locks.Git.Remote
	}
	if c.Workflow.Remote != "" {
		return c.Workflow.Remote
	}
	return "origin"
}

// ContractsConfig is the `contracts:` section.
type ContractsConfig struct {
	OpenAPI   OpenAPIConfig `yaml:"openapi"`
	Generated []string      `yaml:"generated"`
}

// OpenAPIConfig is `contracts.openapi`.
type OpenAPIConfig struct {
	Files []string `yaml:"files"`
}

// ScopeConfig is the `scope:` section: the policy the hooks judge by, and
// the hot files the planner spreads out. All paths are repo-relative
// doublestar patterns.
type ScopeConfig struct {
	scope.Policy `yaml:",inline"`
	HotFiles     []string `yaml:"hot_files"`
	// AgentEditable names lockgate's own files (this file, the work
	// packages) that agents may change; by default they may not.
	AgentEditable []string `yaml:"agent_editable"`
}

// HooksConfig is the `hooks:` section.
type HooksConfig struct {
	RequireLock bool `yaml:"require_lock"`
	// OnStoreUnavailable is "fail" or "warn".
	OnStoreUnavailable string           `yaml:"on_store_unavailable"`
	CommitMsg          CommitMsgConfig  `yaml:"commit_msg"`
	PrePush            PrePushConfig    `yaml:"pre_push"`
	PreReceive         PreReceiveConfig `yaml:"pre_receive"`
	// IdentityEnv names environment variables that identify the worker.
	IdentityEnv []string `yaml:"identity_env"`
	// Trailers: the commit-msg hook adds Lockgate-* trailers naming the
	// committer and the locks of theirs covering the commit.
	Trailers bool `yaml:"trailers"`
}

// CommitMsgConfig is `hooks.commit_msg`.
type CommitMsgConfig struct {
	RequireTask bool `yaml:"require_task"`
}

// PrePushConfig is `hooks.pre_push`: limits on what one push may carry.
type PrePushConfig struct {
	MaxCommits int `yaml:"max_commits"`
	MaxPaths   int `yaml:"max_paths"`
}

// PreReceiveConfig is `hooks.pre_receive`.
type PreReceiveConfig struct {
	// Verify: pre-receive also verifies the pushed commits against the
	// lock log the server holds, as `lockgate verify` does.
	Verify bool `yaml:"verify"`
	// ProtectLog: pre-receive refuses deleting or rewinding the workflow
	// branch and the git store's lock ref, whatever Verify says.
	ProtectLog bool `yaml:"protect_log"`
}

// JournalConfig is the `journal:` section: the clone's event journal
// (.git/lockgate/events.jsonl).
type JournalConfig struct {
	// RotateBytes is the size past which the journal is rotated, once
	// every event of it is on the workflow branch; 0 never.
	RotateBytes int `yaml:"rotate_bytes"`
}

// WorkflowConfig is the `workflow:` section (docs/formats.md).
type WorkflowConfig struct {
	Branch     string `yaml:"branch"`
	AutoCommit bool   `yaml:"auto_commit"`
	AutoPush   bool   `yaml:"auto_push"`
	Remote     string `yaml:"remote"`
	// Signed is "off" or "required": with required, lockgate signs the
	// commits it writes (the workflow branch, the lock table) with the
	// worker's SSH key, and the checks believe only what the allowed
	// signers of the base vouch for (docs/verify.md, Signatures).
	Signed string `yaml:"signed"`
	// AutoPushSet: the file names workflow.auto_push. Without it, a clone
	// on the git store pushes its events: its remote is there by choice.
	AutoPushSet bool `yaml:"-"`
}

// Signing modes of workflow.signed.
const (
	SignedOff      = "off"
	SignedRequired = "required"
)

// TrustConfig is the `trust:` section: who a server believes.
type TrustConfig struct {
	// Pushers maps the user name a forge or web server reports for a push
	// to the workers that user may push commits of: the first is the
	// pusher's own worker id. A user not named is the worker of that name.
	Pushers map[string]WorkerList `yaml:"pushers"`
}

// WorkerList is one worker id, or a list of them; an entry ending in "*"
// names every worker id starting with what comes before it.
type WorkerList []string

// Matches reports whether worker is one the list names.
func (l WorkerList) Matches(worker string) bool {
	for _, w := range l {
		if prefix, ok := strings.CutSuffix(w, "*"); ok && strings.HasPrefix(worker, prefix) || w == worker {
			return true
		}
	}
	return false
}

// PlannerConfig is the `planner:` section.
type PlannerConfig struct {
	CooldownCycles int `yaml:"cooldown_cycles"`
}

// MCPConfig is the `mcp:` section: how `lockgate mcp` serves agents.
type MCPConfig struct {
	// IdentityFromArguments lets a tool call name its own worker, worker
	// type and session; otherwise every call acts as the server's identity
	// (LOCKGATE_WORKER, LOCKGATE_WORKER_TYPE, LOCKGATE_SESSION).
	IdentityFromArguments bool `yaml:"identity_from_arguments"`
}

func defaultDurations() map[string]map[lockkey.Kind]Duration {
	return map[string]map[lockkey.Kind]Duration{
		scope.WorkerHuman: {lockkey.KindActivity: Duration(8 * time.Hour), lockkey.KindTask: Duration(4 * time.Hour)},
		scope.WorkerAgent: {lockkey.KindActivity: Duration(time.Hour), lockkey.KindTask: Duration(30 * time.Minute)},
	}
}

// Default returns the built-in configuration, as docs/config.md lists it, with
// empty scope and contract lists. Every call returns a fresh value.
func Default() *Config {
	c := &Config{Version: 1, WorkPackages: "work-packages.yaml"}
	c.Locks = LocksConfig{
		Store:           "file",
		StaleMinutes:    120,
		Namespaces:      append([]string(nil), lockkey.DefaultNamespaces...),
		Durations:       defaultDurations(),
		FeaturePurposes: []string{"pause", "contract", "plan", "merge", "release"},
		Git: GitStoreConfig{
			Ref:       "refs/lockgate/locks",
			ClockSkew: Duration(2 * time.Second),
			Timeout:   Duration(10 * time.Second),
		},
	}
	c.Hooks = HooksConfig{
		OnStoreUnavailable: "fail",
		Trailers:           true,
		PrePush:            PrePushConfig{MaxCommits: 10000, MaxPaths: 100000},
		// Who pushes, as GitLab, Gitea/Forgejo, a web server (smart HTTP)
		// and ssh report it.
		IdentityEnv: []string{"LOCKGATE_PUSHER", "GL_USERNAME", "GITEA_PUSHER_NAME", "REMOTE_USER", "USER"},
		PreReceive:  PreReceiveConfig{ProtectLog: true},
	}
	c.Workflow = WorkflowConfig{Branch: "lockgate/workflow", AutoCommit: true, Remote: "origin", Signed: SignedOff}
	c.Journal = JournalConfig{RotateBytes: 1 << 20}
	c.Planner = PlannerConfig{CooldownCycles: 5}
	return c
}

// Limits on the files lockgate reads. Real files are far smaller; a larger
// one is refused whole, before it is parsed, so that no file can stall
// every command and hook or flood the terminal with problems.
const (
	MaxConfigBytes       = 1 << 20 // .lockgate.yaml
	MaxWorkPackagesBytes = 2 << 20 // the work packages file
	MaxWorkPackages      = 10_000  // packages in it
)

// ReadFile reads the file at path if it has at most limit bytes; a larger
// file is a *Error naming it. Other errors are returned wrapped, so that
// errors.Is(err, fs.ErrNotExist) tells a missing file.
func ReadFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := checkSize(path, data, limit); err != nil {
		return nil, err
	}
	return data, nil
}

// checkSize refuses data longer than limit as a *Error on file name.
func checkSize(name string, data []byte, limit int) error {
	if len(data) <= limit {
		return nil
	}
	ps := &problems{file: name}
	ps.add(WholeFile, 0, "file larger than %s, the most lockgate reads: refused unread", ByteSize(limit))
	return ps.err()
}

// ByteSize formats a size limit for messages: 1 MiB, 64 KiB, 100 bytes.
func ByteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Load reads the policy file at path. A missing file yields Default() with
// Path "". A present file overlays the defaults; any problem in it is
// reported as a *Error. I/O errors other than "not found" are returned
// wrapped.
func Load(path string) (*Config, error) {
	data, err := readPolicy(path, MaxConfigBytes, "config")
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, err
	}
	return LoadBytes(path, data)
}

// readPolicy reads the file at path, what it holds named in errors: a file
// over limit is a *Error, as it is; any other error is wrapped, so that
// errors.Is(err, fs.ErrNotExist) tells a missing file.
func readPolicy(path string, limit int, what string) ([]byte, error) {
	data, err := ReadFile(path, limit)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return data, nil
}

// LoadBytes parses data as the policy file named name (name is used in
// messages and as Path). Empty data means the defaults.
func LoadBytes(name string, data []byte) (*Config, error) {
	if name == "" {
		name = "<input>"
	}
	if err := checkSize(name, data, MaxConfigBytes); err != nil {
		return nil, err
	}
	ps := &problems{file: name}
	c := Default()
	c.Path = name
	d := newDecoder(ps, maxNodes)
	if root := parseDocument(ps, data); root != nil {
		d.decode(root, reflect.ValueOf(c).Elem(), "")
	}
	c.pos = d.pos
	_, c.Locks.StoreSet = d.pos["locks.store"]
	_, c.Locks.ClaimLockSet = d.pos["locks.use_global_claim_lock"]
	_, c.Workflow.AutoPushSet = d.pos["workflow.auto_push"]
	_, c.Locks.Git.RefSet = d.pos["locks.git.ref"]
	_, gitRemote := d.pos["locks.git.remote"]
	_, wfRemote := d.pos["workflow.remote"]
	c.Locks.Git.RemoteSet = gitRemote || wfRemote
	vs := &problems{file: name}
	c.validate(vs)
	ps.merge(vs)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate checks c's values (as Load does); problems name the line of the
// offending value when c was loaded from a file.
func (c *Config) Validate() error {
	name := c.Path
	if name == "" {
		name = DefaultFile
	}
	ps := &problems{file: name}
	c.validate(ps)
	return ps.err()
}

// TTL returns the default lock duration for a worker type (human|agent)
// and lock kind: "activity" uses the activity duration, anything else
// (task locks, plain keys) the task duration. Unknown worker types and
// missing or non-positive entries fall back to the built-in defaults
// (human for an unknown worker type).
func (c *Config) TTL(workerType string, lockKind lockkey.Kind) time.Duration {
	kind := lockkey.KindTask
	if lockKind == lockkey.KindActivity {
		kind = lockkey.KindActivity
	}
	if d := c.Locks.Durations[workerType][kind]; d > 0 {
		return d.Std()
	}
	defs := defaultDurations()
	if d, ok := defs[workerType][kind]; ok {
		return d.Std()
	}
	return defs[scope.WorkerHuman][kind].Std()
}

// StaleAfter is the age after which a lock is reported stale
// (locks.stale_minutes; the default 120 minutes when unset).
func (c *Config) StaleAfter() time.Duration {
	if c.Locks.StaleMinutes <= 0 {
		return time.Duration(Default().Locks.StaleMinutes) * time.Minute
	}
	return time.Duration(c.Locks.StaleMinutes) * time.Minute
}

// Line returns the line of the value at a dotted path in the file c was
// loaded from ("hooks.require_lock", "scope.key_rules[0].keys[1]"), or 0
// when the value did not come from the file.
func (c *Config) Line(path string) int { return c.pos[path] }

// MaxMinReplicas is the highest locks.redis.min_replicas.
const MaxMinReplicas = 100
