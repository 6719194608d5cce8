package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/scope"
)

const name = ".lockgate.yaml"

// problemStrings returns err's problems as "file:line: msg" strings, or
// fails the test when err is not a *Error.
func problemStrings(t *testing.T, err error) []string {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *config.Error", err, err)
	}
	out := make([]string, len(ce.Problems))
	for i, p := range ce.Problems {
		out[i] = p.String()
	}
	return out
}

func TestDefault(t *testing.T) {
	t.Parallel()
	c := Default()
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"version", c.Version, 1},
		{"store", c.Locks.Store, "file"},
		{"stale", c.Locks.StaleMinutes, 120},
		{"global claim lock", c.Locks.GlobalClaimLock(), false},
		{"namespaces", c.Locks.Namespaces, []string{"api", "db", "event", "flag", "env", "contract", "feature", "task", "activity", "hot", "file", "backfill"}},
		{"durations", c.Locks.Durations, map[string]map[lockkey.Kind]Duration{
			"human": {"activity": Duration(8 * time.Hour), "task": Duration(4 * time.Hour)},
			"agent": {"activity": Duration(time.Hour), "task": Duration(30 * time.Minute)},
		}},
		{"feature purposes", c.Locks.FeaturePurposes, []string{"pause", "contract", "plan", "merge", "release"}},
		{"work packages", c.WorkPackages, "work-packages.yaml"},
		{"require lock", c.Hooks.RequireLock, false},
		{"on store unavailable", c.Hooks.OnStoreUnavailable, "fail"},
		{"require task", c.Hooks.CommitMsg.RequireTask, false},
		{"trailers", c.Hooks.Trailers, true},
		{"max commits", c.Hooks.PrePush.MaxCommits, 10000},
		{"max paths", c.Hooks.PrePush.MaxPaths, 100000},
		{"branch", c.Workflow.Branch, "lockgate/workflow"},
		{"auto commit", c.Workflow.AutoCommit, true},
		{"auto push", c.Workflow.AutoPush, false},
		{"remote", c.Workflow.Remote, "origin"},
		{"cooldown", c.Planner.CooldownCycles, 5},
		{"mcp identity from arguments", c.MCP.IdentityFromArguments, false},
		{"path", c.Path, ""},
		{"scope", c.Scope, ScopeConfig{}},
		{"contracts", c.Contracts, ContractsConfig{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
}

func TestDefaultIndependent(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Locks.Durations["human"]["task"] = 1
	c.Locks.Namespaces[0] = "x"
	if d := Default(); d.Locks.Durations["human"]["task"] != Duration(4*time.Hour) || d.Locks.Namespaces[0] != "api" {
		t.Error("Default() shares state between calls")
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		path     string
		wantPath string
		wantErr  string
		check    func(*Config) error
	}{
		{name: "missing file gives defaults", path: filepath.Join(dir, "absent.yaml"), wantPath: ""},
		{name: "present file", path: write("a.yaml", "hooks: {require_lock: true}\n"), wantPath: filepath.Join(dir, "a.yaml"),
			check: func(c *Config) error {
				if !c.Hooks.RequireLock {
					return errors.New("require_lock not set")
				}
				return nil
			}},
		{name: "empty file gives defaults", path: write("empty.yaml", ""), wantPath: filepath.Join(dir, "empty.yaml")},
		{name: "directory is an I/O error", path: dir, wantErr: "read config"},
		{name: "problems name the path", path: write("bad.yaml", "hooks:\n  nope: 1\n"),
			wantErr: filepath.Join(dir, "bad.yaml") + `:2: unknown key "nope" in hooks`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			if c.Path != tt.wantPath {
				t.Errorf("Path = %q, want %q", c.Path, tt.wantPath)
			}
			if tt.check != nil {
				if err := tt.check(c); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestSpecExample(t *testing.T) {
	t.Parallel()
	c, err := Load(filepath.Join("testdata", "spec.lockgate.yaml"))
	if err != nil {
		t.Fatalf("spec example: %v", err)
	}
	want := Default()
	want.Path = filepath.Join("testdata", "spec.lockgate.yaml")
	want.Locks.StoreSet = true           // the example names locks.store
	want.Workflow.AutoPushSet = true     // and workflow.auto_push
	want.Locks.Git.RemoteSet = true      // and workflow.remote
	want.Locks.ClaimLockSet = true       // and locks.use_global_claim_lock,
	want.Locks.UseGlobalClaimLock = true // on
	want.Contracts.OpenAPI.Files = []string{"openapi/v1.yaml"}
	want.Scope = ScopeConfig{
		Policy: scope.Policy{
			UserOwned: []string{"DESIGN_DOCUMENT.md"},
			Core:      []string{"bridge/loop.py", "bridge/loop_pkg/**"},
			Profiles: map[string]scope.Profile{
				"backfill":        {Allow: []string{"tests/**", "docs/**", ".github/**"}},
				"backfill-bridge": {Allow: []string{"tests/**", "docs/**", "bridge/**", ".github/**"}},
			},
			KeyRules: []scope.KeyRule{{Paths: []string{"migrations/**"}, Keys: []string{"db:migration-slot"}}},
		},
		HotFiles: []string{"api.py", "board_writer.py"},
	}
	c.pos, want.pos = nil, nil
	if !reflect.DeepEqual(c, want) {
		t.Errorf("spec example:\n got %+v\nwant %+v", c, want)
	}
}

func TestOverlay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		yaml  string
		check func(c *Config) any // returns the value under test
		want  any
	}{
		{name: "empty document", yaml: "", check: func(c *Config) any { return c.Locks.StaleMinutes }, want: 120},
		{name: "comments only", yaml: "# nothing\n", check: func(c *Config) any { return c.Workflow.Branch }, want: "lockgate/workflow"},
		{name: "explicit null document", yaml: "~\n", check: func(c *Config) any { return c.Version }, want: 1},
		{name: "document markers", yaml: "---\nversion: 1\n...\n", check: func(c *Config) any { return c.Version }, want: 1},
		{name: "scalar replaces", yaml: "locks: {stale_minutes: 30}\n", check: func(c *Config) any { return c.Locks.StaleMinutes }, want: 30},
		{name: "sibling keeps default", yaml: "locks: {stale_minutes: 30}\n", check: func(c *Config) any { return c.Locks.Store }, want: "file"},
		{name: "bool false overrides true", yaml: "workflow: {auto_commit: false}\n", check: func(c *Config) any { return c.Workflow.AutoCommit }, want: false},
		{name: "list replaces", yaml: "locks: {namespaces: [api, db]}\n", check: func(c *Config) any { return c.Locks.Namespaces }, want: []string{"api", "db"}},
		{name: "empty list replaces", yaml: "locks: {namespaces: []}\n", check: func(c *Config) any { return c.Locks.Namespaces }, want: []string{}},
		{name: "null keeps default", yaml: "locks:\n  namespaces:\n", check: func(c *Config) any { return len(c.Locks.Namespaces) }, want: 12},
		{name: "durations merge per entry", yaml: "locks: {durations: {agent: {task: 10m}}}\n",
			check: func(c *Config) any {
				return []time.Duration{c.TTL("agent", "task"), c.TTL("agent", "activity"), c.TTL("human", "task")}
			},
			want: []time.Duration{10 * time.Minute, time.Hour, 4 * time.Hour}},
		{name: "durations in days and weeks", yaml: "locks: {durations: {human: {task: 2d, activity: 1w}, agent: {task: 1d12h}}}\n",
			check: func(c *Config) any {
				return []time.Duration{c.TTL("human", "task"), c.TTL("human", "activity"), c.TTL("agent", "task")}
			},
			want: []time.Duration{48 * time.Hour, 7 * 24 * time.Hour, 36 * time.Hour}},
		{name: "redis URL store", yaml: "locks: {store: 'redis://127.0.0.1:6379/0'}\n", check: func(c *Config) any { return c.Locks.Store }, want: "redis://127.0.0.1:6379/0"},
		{name: "rediss URL store", yaml: "locks: {store: 'rediss://h:1'}\n", check: func(c *Config) any { return c.Locks.Store }, want: "rediss://h:1"},
		{name: "redis store", yaml: "locks: {store: redis}\n", check: func(c *Config) any { return c.Locks.Store }, want: "redis"},
		{name: "sentinel URL store", yaml: "locks: {store: 'redis+sentinel://s1:26379,s2:26379/mymaster'}\n", check: func(c *Config) any { return c.Locks.Store }, want: "redis+sentinel://s1:26379,s2:26379/mymaster"},
		{name: "cluster URL store", yaml: "locks: {store: 'rediss+cluster://n1:7000'}\n", check: func(c *Config) any { return c.Locks.Store }, want: "rediss+cluster://n1:7000"},
		{name: "min_replicas", yaml: "locks:\n  redis:\n    min_replicas: 2\n", check: func(c *Config) any { return c.Locks.Redis.MinReplicas }, want: 2},
		{name: "min_replicas default", yaml: "locks: {store: redis}\n", check: func(c *Config) any { return c.Locks.Redis.MinReplicas }, want: 0},
		{name: "mcp identity", yaml: "mcp: {identity_from_arguments: true}\n", check: func(c *Config) any { return c.MCP.IdentityFromArguments }, want: true},
		{name: "warn", yaml: "hooks: {on_store_unavailable: warn}\n", check: func(c *Config) any { return c.Hooks.OnStoreUnavailable }, want: "warn"},
		{name: "pre_push limits", yaml: "hooks: {pre_push: {max_commits: 5, max_paths: 7}}\n", check: func(c *Config) any { return c.Hooks.PrePush }, want: PrePushConfig{5, 7}},
		{name: "trailers off", yaml: "hooks: {trailers: false}\n", check: func(c *Config) any { return c.Hooks.Trailers }, want: false},
		{name: "identity env", yaml: "hooks: {identity_env: [CLAUDE_SESSION_ID]}\n", check: func(c *Config) any { return c.Hooks.IdentityEnv }, want: []string{"CLAUDE_SESSION_ID"}},
		{name: "generated", yaml: "contracts: {generated: [gen/**/*.ts]}\n", check: func(c *Config) any { return c.Contracts.Generated }, want: []string{"gen/**/*.ts"}},
		{name: "protected branches", yaml: "scope: {protected_branches: [main, release/*]}\n", check: func(c *Config) any { return c.Scope.ProtectedBranches }, want: []string{"main", "release/*"}},
		{name: "feature purposes", yaml: "locks: {feature_purposes: [pause, freeze]}\n", check: func(c *Config) any { return c.Locks.FeaturePurposes }, want: []string{"pause", "freeze"}},
		{name: "anchors and merge keys", yaml: "scope:\n  profiles:\n    base: &b {allow: [docs/**]}\n    more:\n      <<: *b\n",
			check: func(c *Config) any { return c.Scope.Profiles["more"].Allow }, want: []string{"docs/**"}},
		{name: "explicit key beats merged", yaml: "locks:\n  <<: {stale_minutes: 5, store: redis}\n  stale_minutes: 7\n",
			check: func(c *Config) any { return fmt.Sprint(c.Locks.StaleMinutes, " ", c.Locks.Store) }, want: "7 redis"},
		{name: "number as string value", yaml: "workflow: {remote: 1234}\n", check: func(c *Config) any { return c.Workflow.Remote }, want: "1234"},
		{name: "hex integer", yaml: "planner: {cooldown_cycles: 0x10}\n", check: func(c *Config) any { return c.Planner.CooldownCycles }, want: 16},
		{name: "utf-8 BOM", yaml: "\ufeffversion: 1\nplanner: {cooldown_cycles: 2}\n", check: func(c *Config) any { return c.Planner.CooldownCycles }, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadBytes(name, []byte(tt.yaml))
			if err != nil {
				t.Fatalf("LoadBytes(%q) error:\n%v", tt.yaml, err)
			}
			if got := tt.check(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
			if c.Path != name {
				t.Errorf("Path = %q", c.Path)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "unknown key", yaml: "version: 1\nhooks:\n  require_lock: true\n  requre_lock: true\n",
			want: []string{`.lockgate.yaml:4: unknown key "requre_lock" in hooks`}},
		{name: "unknown top-level key", yaml: "versoin: 1\n",
			want: []string{`.lockgate.yaml:1: unknown key "versoin"`}},
		{name: "unknown nested key", yaml: "hooks:\n  commit_msg:\n    require_tasks: true\n",
			want: []string{`.lockgate.yaml:3: unknown key "require_tasks" in hooks.commit_msg`}},
		{name: "trailers not a boolean", yaml: "hooks:\n  trailers: sometimes\n",
			want: []string{`.lockgate.yaml:2: hooks.trailers: expected true or false, got string "sometimes"`}},
		{name: "unknown key in profile", yaml: "scope:\n  profiles:\n    p:\n      allows: [a]\n",
			want: []string{`.lockgate.yaml:4: unknown key "allows" in scope.profiles.p`}},
		{name: "unknown key in key rule", yaml: "scope:\n  key_rules:\n    - paths: [a]\n      keys: [b]\n      key: c\n",
			want: []string{`.lockgate.yaml:5: unknown key "key" in scope.key_rules[0]`}},
		{name: "all problems reported", yaml: "version: 2\nlocks:\n  stale_minutes: abc\n  bogus: 1\nhooks:\n  on_store_unavailable: ignore\n",
			want: []string{
				`.lockgate.yaml:1: version: unsupported version 2 (this lockgate reads version 1)`,
				`.lockgate.yaml:3: locks.stale_minutes: expected an integer, got string "abc"`,
				`.lockgate.yaml:4: unknown key "bogus" in locks`,
				`.lockgate.yaml:6: hooks.on_store_unavailable: must be "fail" or "warn", got "ignore"`,
			}},
		{name: "wrong type bool", yaml: "hooks:\n  require_lock: yes\n",
			want: []string{`.lockgate.yaml:2: hooks.require_lock: expected true or false, got string "yes"`}},
		{name: "wrong type int from string", yaml: "locks:\n  stale_minutes: \"120\"\n",
			want: []string{`.lockgate.yaml:2: locks.stale_minutes: expected an integer, got string "120"`}},
		{name: "wrong type float", yaml: "version: 1.0\n",
			want: []string{`.lockgate.yaml:1: version: expected an integer, got number 1.0`}},
		{name: "wrong type list for string", yaml: "locks:\n  store: [file]\n",
			want: []string{`.lockgate.yaml:2: locks.store: expected a string, got a list`}},
		{name: "wrong type scalar for list", yaml: "scope:\n  core: bridge/**\n",
			want: []string{`.lockgate.yaml:2: scope.core: expected a list, got string "bridge/**"`}},
		{name: "wrong type list for section", yaml: "hooks: [a]\n",
			want: []string{`.lockgate.yaml:1: hooks: expected a mapping, got a list`}},
		{name: "top level not a mapping", yaml: "- a\n- b\n",
			want: []string{`.lockgate.yaml:1: top level: expected a mapping, got a list`}},
		{name: "top level scalar", yaml: "hello\n",
			want: []string{`.lockgate.yaml:1: top level: expected a mapping, got string "hello"`}},
		{name: "int out of range", yaml: "locks:\n  stale_minutes: 99999999999999999999999\n",
			want: []string{`.lockgate.yaml:2: locks.stale_minutes: expected an integer, got number 99999999999999999999999`}},
		{name: "duration without unit", yaml: "locks:\n  durations:\n    human:\n      task: 30\n",
			want: []string{`.lockgate.yaml:4: locks.durations.human.task: invalid duration "30": use a duration such as 30m, 8h or 2d`}},
		{name: "duration garbage", yaml: "locks:\n  durations: {agent: {activity: soon}}\n",
			want: []string{`.lockgate.yaml:2: locks.durations.agent.activity: invalid duration "soon": use a duration such as 30m, 8h or 2d`}},
		{name: "duration not positive", yaml: "locks:\n  durations:\n    agent:\n      task: 0s\n      activity: -1h\n",
			want: []string{
				`.lockgate.yaml:4: locks.durations.agent.task: duration must be positive, got 0s`,
				`.lockgate.yaml:5: locks.durations.agent.activity: duration must be positive, got -1h0m0s`,
			}},
		{name: "duration unknown worker type", yaml: "locks:\n  durations:\n    robot: {task: 1h}\n",
			want: []string{`.lockgate.yaml:3: locks.durations: unknown worker type "robot" (want human or agent)`}},
		{name: "duration unknown lock kind", yaml: "locks:\n  durations:\n    human:\n      job: 1h\n",
			want: []string{`.lockgate.yaml:4: locks.durations.human: unknown lock kind "job" (want activity or task)`}},
		{name: "version", yaml: "\nversion: 2\n",
			want: []string{`.lockgate.yaml:2: version: unsupported version 2 (this lockgate reads version 1)`}},
		{name: "on_store_unavailable", yaml: "hooks:\n  on_store_unavailable: ignore\n",
			want: []string{`.lockgate.yaml:2: hooks.on_store_unavailable: must be "fail" or "warn", got "ignore"`}},
		{name: "stale_minutes zero", yaml: "locks:\n  stale_minutes: 0\n",
			want: []string{`.lockgate.yaml:2: locks.stale_minutes: must be greater than 0, got 0`}},
		{name: "stale_minutes negative", yaml: "locks: {stale_minutes: -5}\n",
			want: []string{`.lockgate.yaml:1: locks.stale_minutes: must be greater than 0, got -5`}},
		{name: "unknown namespace", yaml: "locks:\n  namespaces:\n    - api\n    - queue\n",
			want: []string{`.lockgate.yaml:4: locks.namespaces: unknown namespace "queue" (known: api, db, event, flag, env, contract, feature, task, activity, hot, file, backfill)`}},
		{name: "store", yaml: "locks:\n  store: memcached://x\n",
			want: []string{`.lockgate.yaml:2: locks.store: must be "file", "git", "redis" or a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL, got "memcached://x"`}},
		{name: "min_replicas negative", yaml: "locks:\n  redis:\n    min_replicas: -1\n",
			want: []string{`.lockgate.yaml:3: locks.redis.min_replicas: must be a whole number from 0 to 100, got -1`}},
		{name: "min_replicas too many", yaml: "locks:\n  redis: {min_replicas: 101}\n",
			want: []string{`.lockgate.yaml:2: locks.redis.min_replicas: must be a whole number from 0 to 100, got 101`}},
		{name: "min_replicas not a number", yaml: "locks:\n  redis: {min_replicas: one}\n",
			want: []string{`.lockgate.yaml:2: locks.redis.min_replicas: expected an integer, got string "one"`}},
		{name: "redis unknown key", yaml: "locks:\n  redis: {min_replica: 1}\n",
			want: []string{`.lockgate.yaml:2: unknown key "min_replica" in locks.redis`}},
		{name: "git ref", yaml: "locks:\n  git:\n    ref: lockgate/locks\n",
			want: []string{`.lockgate.yaml:3: locks.git.ref: must be a full ref name such as refs/lockgate/locks, got "lockgate/locks"`}},
		{name: "git ref dots", yaml: "locks:\n  git: {ref: refs/a..b}\n",
			want: []string{`.lockgate.yaml:2: locks.git.ref: must be a full ref name such as refs/lockgate/locks, got "refs/a..b"`}},
		{name: "git remote option", yaml: "locks:\n  git: {remote: --upload-pack=x}\n",
			want: []string{`.lockgate.yaml:2: locks.git.remote: not a remote name or URL: "--upload-pack=x"`}},
		{name: "git timeout", yaml: "locks:\n  git:\n    timeout: 0s\n",
			want: []string{`.lockgate.yaml:3: locks.git.timeout: must be positive, got 0s`}},
		{name: "git skew", yaml: "locks:\n  git:\n    clock_skew: -1s\n    max_age: -2s\n",
			want: []string{`.lockgate.yaml:3: locks.git.clock_skew: must not be negative, got -1s`, `.lockgate.yaml:4: locks.git.max_age: must not be negative, got -2s`}},
		{name: "feature purpose", yaml: "locks:\n  feature_purposes: [Pause]\n",
			want: []string{`.lockgate.yaml:2: locks.feature_purposes: invalid purpose "Pause" (lowercase letters, digits, - and _)`}},
		{name: "invalid pattern", yaml: "scope:\n  core:\n    - ok/**\n    - 'bad/[x'\n",
			want: []string{`.lockgate.yaml:4: scope.core[1]: invalid pattern "bad/[x" (unclosed [ or {, or a trailing \)`}},
		{name: "absolute pattern", yaml: "scope:\n  user_owned: [/etc/passwd]\n",
			want: []string{`.lockgate.yaml:2: scope.user_owned[0]: pattern "/etc/passwd" must be repo-relative (no leading /)`}},
		{name: "dotdot pattern", yaml: "scope:\n  hot_files:\n    - src/../../x\n",
			want: []string{`.lockgate.yaml:3: scope.hot_files[0]: pattern "src/../../x" must not contain .. (it would leave the repository)`}},
		{name: "dotdot in profile", yaml: "scope:\n  profiles:\n    p: {allow: [../x]}\n",
			want: []string{`.lockgate.yaml:3: scope.profiles.p.allow[0]: pattern "../x" must not contain .. (it would leave the repository)`}},
		{name: "pattern in key rule", yaml: "scope:\n  key_rules:\n    - paths: ['{a']\n      keys: [db:migration-slot]\n",
			want: []string{`.lockgate.yaml:3: scope.key_rules[0].paths[0]: invalid pattern "{a" (unclosed [ or {, or a trailing \)`}},
		{name: "generated pattern", yaml: "contracts:\n  generated: [/gen]\n",
			want: []string{`.lockgate.yaml:2: contracts.generated[0]: pattern "/gen" must be repo-relative (no leading /)`}},
		{name: "dot segment", yaml: "scope:\n  core: [./x]\n",
			want: []string{`.lockgate.yaml:2: scope.core[0]: pattern "./x" must not contain . segments: write it without ./`}},
		{name: "trailing slash", yaml: "scope:\n  core: [docs/]\n",
			want: []string{`.lockgate.yaml:2: scope.core[0]: pattern "docs/" ends in /: write "docs/**" to cover a directory`}},
		{name: "empty entry", yaml: "scope:\n  core:\n    -\n",
			want: []string{`.lockgate.yaml:3: scope.core[0]: empty pattern`}},
		{name: "key rule needs paths and keys", yaml: "scope:\n  key_rules:\n    - paths: []\n      keys: []\n    - keys: [db:migration-slot]\n",
			want: []string{
				`.lockgate.yaml:3: scope.key_rules[0]: paths must not be empty`,
				`.lockgate.yaml:3: scope.key_rules[0]: keys must not be empty`,
				`.lockgate.yaml:5: scope.key_rules[1]: paths must not be empty`,
			}},
		{name: "protected branch", yaml: "scope:\n  protected_branches: ['release/[']\n",
			want: []string{`.lockgate.yaml:2: scope.protected_branches[0]: invalid pattern "release/["`}},
		{name: "workflow branch", yaml: "workflow:\n  branch: a..b\n",
			want: []string{`.lockgate.yaml:2: workflow.branch: "a..b" is not a valid branch name`}},
		{name: "pre_push limits", yaml: "hooks:\n  pre_push: {max_commits: 0}\n",
			want: []string{`.lockgate.yaml:2: hooks.pre_push.max_commits: must be greater than 0, got 0`}},
		{name: "identity env", yaml: "hooks:\n  identity_env: [MY-VAR]\n",
			want: []string{`.lockgate.yaml:2: hooks.identity_env: invalid environment variable name "MY-VAR"`}},
		{name: "cooldown negative", yaml: "planner:\n  cooldown_cycles: -1\n",
			want: []string{`.lockgate.yaml:2: planner.cooldown_cycles: must not be negative, got -1`}},
		{name: "duplicate key", yaml: "hooks:\n  require_lock: true\n  require_lock: false\n",
			want: []string{`.lockgate.yaml:3: duplicate key "require_lock" in hooks (first at line 2)`}},
		{name: "multiple documents", yaml: "version: 1\n---\nversion: 1\n",
			want: []string{`.lockgate.yaml:2: multiple YAML documents: the file must hold exactly one`}},
		{name: "trailing empty document", yaml: "version: 1\n---\n",
			want: []string{`.lockgate.yaml:2: multiple YAML documents: the file must hold exactly one`}},
		{name: "syntax error", yaml: "version: 1\nlocks: [\n",
			want: []string{`.lockgate.yaml:2: invalid YAML: did not find expected node content`}},
		{name: "syntax error on first line", yaml: "a: b: c\n",
			want: []string{`.lockgate.yaml:1: invalid YAML: mapping values are not allowed in this context`}},
		{name: "tab indentation", yaml: "hooks:\n\trequire_lock: true\n",
			want: []string{`.lockgate.yaml:2: invalid YAML: found character that cannot start any token`}},
		{name: "control character", yaml: "version: 1\nx: \"\x01\"\n",
			want: []string{`.lockgate.yaml:2: invalid YAML: control characters are not allowed`}},
		{name: "invalid utf-8", yaml: "version: 1\n\n# \xff\n",
			want: []string{`.lockgate.yaml:3: invalid YAML: invalid leading UTF-8 octet`}},
		{name: "unknown anchor", yaml: "version: 1\nlocks: *nope\n",
			want: []string{`.lockgate.yaml:2: invalid YAML: unknown anchor 'nope' referenced`}},
		{name: "alias cycle", yaml: "locks: &l\n  store: file\n  <<: *l\n",
			want: []string{`.lockgate.yaml:3: locks: alias *l refers to itself`}},
		{name: "self-containing list", yaml: "scope:\n  core: &x [a, *x]\n",
			want: []string{
				`.lockgate.yaml:2: scope.core[1]: expected a string, got a list`,
				`.lockgate.yaml:2: scope.core[1]: empty pattern`,
			}},
		{name: "merge of a scalar", yaml: "locks:\n  <<: 5\n",
			want: []string{`.lockgate.yaml:2: locks: << takes a mapping or a list of mappings, got integer 5`}},
		{name: "non-string key", yaml: "hooks:\n  [a]: 1\n",
			want: []string{`.lockgate.yaml:2: hooks: keys must be strings, got a list`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadBytes(name, []byte(tt.yaml))
			if err == nil {
				t.Fatalf("LoadBytes(%q) = %+v, want error", tt.yaml, c)
			}
			if c != nil {
				t.Errorf("LoadBytes returned a config with an error")
			}
			got := problemStrings(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LoadBytes(%q) problems:\n got %q\nwant %q", tt.yaml, got, tt.want)
			}
			if e := err.Error(); e != strings.Join(tt.want, "\n") {
				t.Errorf("Error() = %q", e)
			}
		})
	}
}

func TestAliasBomb(t *testing.T) {
	t.Parallel()
	// Each level doubles: 2^30 values if expanded naively.
	var b strings.Builder
	b.WriteString("scope:\n  profiles:\n    p0: &a0 {allow: [docs/**]}\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "    p%d: &a%d {<<: [*a%d, *a%d]}\n", i, i, i-1, i-1)
	}
	// Refused, not expanded: a decoder that expanded it would not end
	// (the package's -timeout fails it) or run out of memory.
	_, err := LoadBytes(name, []byte(b.String()))
	if err == nil {
		t.Fatal("alias bomb accepted")
	}
	if !strings.Contains(err.Error(), "too deeply aliased") {
		t.Errorf("error = %.300v", err)
	}
}

func TestTTL(t *testing.T) {
	t.Parallel()
	c, err := LoadBytes(name, []byte("locks:\n  durations:\n    agent: {task: 10m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		cfg        *Config
		workerType string
		kind       lockkey.Kind
		want       time.Duration
	}{
		{"human activity", Default(), "human", "activity", 8 * time.Hour},
		{"human task", Default(), "human", "task", 4 * time.Hour},
		{"agent activity", Default(), "agent", "activity", time.Hour},
		{"agent task", Default(), "agent", "task", 30 * time.Minute},
		{"plain key uses task duration", Default(), "agent", "", 30 * time.Minute},
		{"path key uses task duration", Default(), "human", "src/a.py", 4 * time.Hour},
		{"overridden", c, "agent", "task", 10 * time.Minute},
		{"not overridden", c, "agent", "activity", time.Hour},
		{"unknown worker type falls back to human", Default(), "robot", "task", 4 * time.Hour},
		{"zero config falls back to defaults", &Config{}, "agent", "activity", time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.cfg.TTL(tt.workerType, tt.kind); got != tt.want {
				t.Errorf("TTL(%q, %q) = %v, want %v", tt.workerType, tt.kind, got, tt.want)
			}
		})
	}
}

func TestStaleAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  *Config
		want time.Duration
	}{
		{"default", Default(), 2 * time.Hour},
		{"zero config", &Config{}, 2 * time.Hour},
		{"set", &Config{Locks: LocksConfig{StaleMinutes: 15}}, 15 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.cfg.StaleAfter(); got != tt.want {
				t.Errorf("StaleAfter() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestValidateKeys(t *testing.T) {
	t.Parallel()
	c, err := LoadBytes(name, []byte("scope:\n  key_rules:\n    - paths: [migrations/**]\n      keys:\n        - db:migration-slot\n        - 'queue:x'\n"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(k string) error {
		if strings.HasPrefix(k, "queue:") {
			return fmt.Errorf("namespace %q is not permitted", "queue")
		}
		return nil
	}
	got := problemStrings(t, c.ValidateKeys(check))
	want := []string{`.lockgate.yaml:6: scope.key_rules[0].keys[1]: namespace "queue" is not permitted`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := Default().ValidateKeys(check); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if l := c.Line("scope.key_rules[0].keys[0]"); l != 5 {
		t.Errorf("Line = %d, want 5", l)
	}
}

func TestDurationText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    Duration
		wantErr bool
	}{
		{"hours", "8h", Duration(8 * time.Hour), false},
		{"mixed", "1h30m", Duration(90 * time.Minute), false},
		{"bare number", "30", 0, true},
		{"empty", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var d Duration
			err := d.UnmarshalText([]byte(tt.in))
			if (err != nil) != tt.wantErr || d != tt.want {
				t.Fatalf("UnmarshalText(%q) = %v, %v", tt.in, d, err)
			}
			if err == nil {
				b, _ := d.MarshalText()
				var back Duration
				if err := back.UnmarshalText(b); err != nil || back != d {
					t.Errorf("round trip %q: %v %v", b, back, err)
				}
			}
		})
	}
}

func TestCheckPattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pat  string
		ok   bool
	}{
		{"plain", "src/a.py", true},
		{"doublestar", "src/**/*.py", true},
		{"alternation", "{a,b}/*.go", true},
		{"dot dir", ".github/**", true},
		{"dots in name", "a..b/c", true},
		{"empty", "", false},
		{"leading slash", "/a", false},
		{"dotdot", "a/../b", false},
		{"dotdot end", "a/..", false},
		{"dot", "a/./b", false},
		{"double slash", "a//b", false},
		{"trailing space", "a ", false},
		{"unclosed class", "[a", false},
		{"unclosed brace", "{a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if msg := CheckPattern(tt.pat); (msg == "") != tt.ok {
				t.Errorf("CheckPattern(%q) = %q, want ok=%v", tt.pat, msg, tt.ok)
			}
		})
	}
}

// TestProblemsBounded: however many problems a file has, few are kept and
// fewer shown, with the count of the rest; unknown keys that an alias
// repeats count against the document's budget.
func TestProblemsBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("m: &m {")
	for i := range 100 {
		fmt.Fprintf(&b, "u%d: 1, ", i)
	}
	b.WriteString("}\nscope:\n  profiles:\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "    p%d: *m\n", i)
	}
	_, err := LoadBytes(name, []byte(b.String()))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *Error", err)
	}
	if len(ce.Problems) != MaxProblems || ce.Omitted == 0 {
		t.Fatalf("%d problems kept, %d omitted: want %d kept and more omitted", len(ce.Problems), ce.Omitted, MaxProblems)
	}
	msg := ce.Error()
	lines := strings.Split(msg, "\n")
	if len(lines) != ShownProblems+1 || !strings.HasSuffix(lines[ShownProblems], "more problems") {
		t.Fatalf("message of %d lines, want %d ending in a count:\n%s", len(lines), ShownProblems+1, msg)
	}
	if !strings.Contains(msg, "… and ") || !strings.Contains(msg, ",") {
		t.Fatalf("count of the rest missing or not grouped: %s", lines[ShownProblems])
	}
	if !strings.Contains(msg, "more than 100000 values") && ce.Omitted+len(ce.Problems) > maxNodes {
		t.Fatalf("more problems than the node budget allows: %d", ce.Omitted+len(ce.Problems))
	}

	big := append([]byte("version: 1\n"), make([]byte, MaxConfigBytes)...)
	if _, err := LoadBytes(name, big); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("oversized file: %v", err)
	}
}
