package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/scope"
)

// Compiled on first use, not at the start of every process (hooks read a
// cached config and never validate).
var (
	purposeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`) })
	envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// at returns the line of the value at path, or WholeFile.
func (c *Config) at(path string) int { return c.pos[path] }

// validate adds a problem for every invalid value of c.
func (c *Config) validate(ps *problems) {
	if c.Version != 1 {
		ps.add(c.at("version"), 0, "version: unsupported version %d (this lockgate reads version 1)", c.Version)
	}
	c.validateLocks(ps)
	if c.Journal.RotateBytes < 0 {
		ps.add(c.at("journal.rotate_bytes"), 0, "journal.rotate_bytes: must be 0 (never rotate) or a size in bytes, got %d", c.Journal.RotateBytes)
	}
	if strings.TrimSpace(c.WorkPackages) == "" {
		ps.add(c.at("work_packages"), 0, "work_packages: must name a file")
	}
	c.checkPatterns(ps, "contracts.openapi.files", c.Contracts.OpenAPI.Files)
	c.checkPatterns(ps, "contracts.generated", c.Contracts.Generated)
	c.validateScope(ps)
	c.validateHooks(ps)
	if msg := checkBranch(c.Workflow.Branch); msg != "" {
		ps.add(c.at("workflow.branch"), 0, "workflow.branch: %s", msg)
	}
	if strings.TrimSpace(c.Workflow.Remote) == "" {
		ps.add(c.at("workflow.remote"), 0, "workflow.remote: must name a remote")
	}
	if s := c.Workflow.Signed; s != SignedOff && s != SignedRequired {
		ps.add(c.at("workflow.signed"), 0, `workflow.signed: must be "off" or "required", got %s`, quote(s))
	}
	c.validateTrust(ps)
	if c.Planner.CooldownCycles < 0 {
		ps.add(c.at("planner.cooldown_cycles"), 0, "planner.cooldown_cycles: must not be negative, got %d", c.Planner.CooldownCycles)
	}
}

// validateLocks adds a problem for every invalid value of the locks section.
func (c *Config) validateLocks(ps *problems) {
	if s := c.Locks.Store; s != "file" && s != "git" && s != "redis" && !slices.ContainsFunc(RedisURLSchemes, func(p string) bool { return strings.HasPrefix(s, p) }) {
		ps.add(c.at("locks.store"), 0, `locks.store: must be "file", "git", "redis" or a redis://, rediss://, redis+sentinel:// or redis+cluster:// URL, got %s`, quote(s))
	}
	// More replicas than a deployment could have is a typo, not a wish:
	// every acquisition would be refused.
	if n := c.Locks.Redis.MinReplicas; n < 0 || n > MaxMinReplicas {
		ps.add(c.at("locks.redis.min_replicas"), 0, "locks.redis.min_replicas: must be a whole number from 0 to %d, got %d", MaxMinReplicas, n)
	}
	if r := c.Locks.Git.Ref; !validFullRef(r) {
		ps.add(c.at("locks.git.ref"), 0, "locks.git.ref: must be a full ref name such as refs/lockgate/locks, got %s", quote(r))
	}
	if r := c.Locks.Git.Remote; strings.HasPrefix(r, "-") || strings.ContainsAny(r, "\n\r\x00") {
		ps.add(c.at("locks.git.remote"), 0, "locks.git.remote: not a remote name or URL: %s", quote(r))
	}
	if d := c.Locks.Git.ClockSkew; d < 0 {
		ps.add(c.at("locks.git.clock_skew"), 0, "locks.git.clock_skew: must not be negative, got %s", d)
	}
	if d := c.Locks.Git.MaxAge; d < 0 {
		ps.add(c.at("locks.git.max_age"), 0, "locks.git.max_age: must not be negative, got %s", d)
	}
	if d := c.Locks.Git.Timeout; d <= 0 {
		ps.add(c.at("locks.git.timeout"), 0, "locks.git.timeout: must be positive, got %s", d)
	}
	if c.Locks.StaleMinutes <= 0 {
		ps.add(c.at("locks.stale_minutes"), 0, "locks.stale_minutes: must be greater than 0, got %d", c.Locks.StaleMinutes)
	}
	for i, ns := range c.Locks.Namespaces {
		if !slices.Contains(lockkey.DefaultNamespaces, ns) {
			ps.add(c.at(fmt.Sprintf("locks.namespaces[%d]", i)), 0, "locks.namespaces: unknown namespace %s (known: %s)",
				quote(ns), strings.Join(lockkey.DefaultNamespaces, ", "))
		}
	}
	c.validateDurations(ps)
	for i, fp := range c.Locks.FeaturePurposes {
		if !purposeRE().MatchString(fp) {
			ps.add(c.at(fmt.Sprintf("locks.feature_purposes[%d]", i)), 0,
				"locks.feature_purposes: invalid purpose %s (lowercase letters, digits, - and _)", quote(fp))
		}
	}
}

// validateDurations adds a problem for every unknown worker type or lock
// kind of locks.durations, and every duration that is not positive.
func (c *Config) validateDurations(ps *problems) {
	for _, wt := range sortedKeys(c.Locks.Durations) {
		p := "locks.durations." + wt
		if wt != scope.WorkerHuman && wt != scope.WorkerAgent {
			ps.add(c.at(p), 0, "locks.durations: unknown worker type %s (want human or agent)", quote(wt))
			continue
		}
		kinds := c.Locks.Durations[wt]
		for _, kind := range sortedKeys(kinds) {
			kp := p + "." + string(kind)
			if kind != lockkey.KindActivity && kind != lockkey.KindTask {
				ps.add(c.at(kp), 0, "%s: unknown lock kind %s (want activity or task)", p, quote(string(kind)))
				continue
			}
			if d := kinds[kind]; d <= 0 {
				ps.add(c.at(kp), 0, "%s: duration must be positive, got %s", kp, d)
			}
		}
	}
}

// validateScope adds a problem for every invalid pattern, profile, key
// rule and protected branch of the scope section.
func (c *Config) validateScope(ps *problems) {
	c.checkPatterns(ps, "scope.user_owned", c.Scope.UserOwned)
	c.checkPatterns(ps, "scope.core", c.Scope.Core)
	c.checkPatterns(ps, "scope.hot_files", c.Scope.HotFiles)
	for _, name := range sortedKeys(c.Scope.Profiles) {
		p := "scope.profiles." + name
		if strings.TrimSpace(name) == "" || strings.ContainsFunc(name, unicode.IsSpace) {
			ps.add(c.at(p), 0, "scope.profiles: invalid profile name %s", quote(name))
		}
		c.checkPatterns(ps, p+".allow", c.Scope.Profiles[name].Allow)
	}
	for i, r := range c.Scope.KeyRules {
		p := fmt.Sprintf("scope.key_rules[%d]", i)
		if len(r.Paths) == 0 {
			ps.add(c.at(p), 0, "%s: paths must not be empty", p)
		}
		if len(r.Keys) == 0 {
			ps.add(c.at(p), 0, "%s: keys must not be empty", p)
		}
		c.checkPatterns(ps, p+".paths", r.Paths)
		for j, k := range r.Keys {
			if strings.TrimSpace(k) == "" {
				ps.add(c.at(fmt.Sprintf("%s.keys[%d]", p, j)), 0, "%s.keys[%d]: empty key", p, j)
			}
		}
	}
	for i, b := range c.Scope.ProtectedBranches {
		p := fmt.Sprintf("scope.protected_branches[%d]", i)
		switch {
		case b == "":
			ps.add(c.at(p), 0, "%s: empty branch pattern", p)
		case strings.ContainsFunc(b, unicode.IsSpace):
			ps.add(c.at(p), 0, "%s: branch pattern %s contains whitespace", p, quote(b))
		case !doublestar.ValidatePattern(b):
			ps.add(c.at(p), 0, "%s: invalid pattern %s", p, quote(b))
		}
	}
}

// validateHooks adds a problem for every invalid value of the hooks section.
func (c *Config) validateHooks(ps *problems) {
	if s := c.Hooks.OnStoreUnavailable; s != "fail" && s != "warn" {
		ps.add(c.at("hooks.on_store_unavailable"), 0, `hooks.on_store_unavailable: must be "fail" or "warn", got %s`, quote(s))
	}
	if c.Hooks.PrePush.MaxCommits <= 0 {
		ps.add(c.at("hooks.pre_push.max_commits"), 0, "hooks.pre_push.max_commits: must be greater than 0, got %d", c.Hooks.PrePush.MaxCommits)
	}
	if c.Hooks.PrePush.MaxPaths <= 0 {
		ps.add(c.at("hooks.pre_push.max_paths"), 0, "hooks.pre_push.max_paths: must be greater than 0, got %d", c.Hooks.PrePush.MaxPaths)
	}
	for i, name := range c.Hooks.IdentityEnv {
		if !envNameRE().MatchString(name) {
			ps.add(c.at(fmt.Sprintf("hooks.identity_env[%d]", i)), 0, "hooks.identity_env: invalid environment variable name %s", quote(name))
		}
	}
}

// validateTrust adds a problem for every invalid entry of trust.pushers:
// a forge user or worker id lockgate could never match (empty, with
// whitespace or control characters).
func (c *Config) validateTrust(ps *problems) {
	bad := func(s string) bool {
		return s == "" || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
	}
	users := make([]string, 0, len(c.Trust.Pushers))
	for u := range c.Trust.Pushers {
		users = append(users, u)
	}
	slices.Sort(users)
	for _, u := range users {
		p := "trust.pushers." + u
		if bad(u) {
			ps.add(c.at(p), 0, "trust.pushers: invalid user name %s", quote(u))
		}
		ws := c.Trust.Pushers[u]
		if len(ws) == 0 {
			ps.add(c.at(p), 0, "%s: must name a worker", p)
		}
		for i, w := range ws {
			switch {
			case bad(w):
				ps.add(c.at(p), 0, "%s[%d]: invalid worker id %s", p, i, quote(w))
			case i == 0 && strings.HasSuffix(w, "*"):
				ps.add(c.at(p), 0, "%s[0]: %s is a pattern; the first entry is the worker the user pushes as", p, quote(w))
			}
		}
	}
}

// checkPatterns validates a list of repo-relative doublestar patterns.
func (c *Config) checkPatterns(ps *problems, path string, list []string) {
	for i, pat := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if msg := CheckPattern(pat); msg != "" {
			ps.add(c.at(p), 0, "%s: %s", p, msg)
		}
	}
}

// CheckPattern reports what is wrong with a repo-relative path or
// doublestar pattern as used in scope lists, or "" when it is fine.
func CheckPattern(pat string) string {
	switch {
	case pat == "":
		return "empty pattern"
	case strings.TrimSpace(pat) != pat:
		return fmt.Sprintf("pattern %s has leading or trailing whitespace", quote(pat))
	case strings.HasPrefix(pat, "/"):
		return fmt.Sprintf("pattern %s must be repo-relative (no leading /)", quote(pat))
	case strings.HasSuffix(pat, "/"):
		return fmt.Sprintf("pattern %s ends in /: write %s to cover a directory", quote(pat), quote(pat+"**"))
	case strings.Contains(pat, "//"):
		return fmt.Sprintf("pattern %s contains //", quote(pat))
	}
	for _, seg := range strings.Split(pat, "/") {
		switch seg {
		case "..":
			return fmt.Sprintf("pattern %s must not contain .. (it would leave the repository)", quote(pat))
		case ".":
			return fmt.Sprintf("pattern %s must not contain . segments: write it without ./", quote(pat))
		}
	}
	if !doublestar.ValidatePattern(pat) {
		return fmt.Sprintf("invalid pattern %s (unclosed [ or {, or a trailing \\)", quote(pat))
	}
	return ""
}

// checkBranch applies git's branch-name rules (git check-ref-format).
func checkBranch(b string) string {
	switch {
	case b == "":
		return "must name a branch"
	case strings.HasPrefix(b, "refs/"):
		return fmt.Sprintf("give the branch name without refs/heads/, got %s", quote(b))
	case strings.HasPrefix(b, "-"), strings.HasPrefix(b, "/"), strings.HasSuffix(b, "/"),
		strings.HasSuffix(b, "."), strings.Contains(b, ".."), strings.Contains(b, "//"),
		strings.Contains(b, "@{"), b == "@",
		strings.ContainsAny(b, " ~^:?*[\\\x7f"),
		strings.ContainsFunc(b, func(r rune) bool { return r < 0x20 }):
		return fmt.Sprintf("%s is not a valid branch name", quote(b))
	}
	for _, seg := range strings.Split(b, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock") {
			return fmt.Sprintf("%s is not a valid branch name", quote(b))
		}
	}
	return ""
}

// ValidateKeys runs check on every key of scope.key_rules (the caller's
// lock-key validator) and reports the failures with their lines.
func (c *Config) ValidateKeys(check func(key string) error) error {
	name := c.Path
	if name == "" {
		name = DefaultFile
	}
	ps := &problems{file: name}
	for i, r := range c.Scope.KeyRules {
		for j, k := range r.Keys {
			if err := check(k); err != nil {
				p := fmt.Sprintf("scope.key_rules[%d].keys[%d]", i, j)
				ps.add(c.at(p), 0, "%s: %v", p, err)
			}
		}
	}
	return ps.err()
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// validFullRef accepts the ref names the git store can lease: refs/…,
// without the characters git forbids in ref names.
func validFullRef(r string) bool {
	return strings.HasPrefix(r, "refs/") && !strings.ContainsAny(r, " \t\n\r\x00~^:?*[\\") &&
		!strings.Contains(r, "..") && !strings.Contains(r, "//") && !strings.HasSuffix(r, "/") &&
		!strings.HasSuffix(r, ".lock") && !strings.Contains(r, "@{")
}
