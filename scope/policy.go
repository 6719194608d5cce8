package scope

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/model/pathmatch"
)

// Rule ids, stable: they appear in JSON reports and in scripts.
const (
	RuleUserOwned       = "user_owned"
	RuleCore            = "core"
	RuleProfile         = "profile"
	RuleKeyRule         = "key_rule"
	RuleProtectedBranch = "protected_branch"
	RuleUnknownProfile  = "unknown_profile"
)

// Worker types (docs/config.md, Identity).
const (
	WorkerHuman = "human"
	WorkerAgent = "agent"
)

// Policy is the `scope:` section of .lockgate.yaml, as the config file
// spells it. Every path entry is a doublestar pattern over repo-relative
// paths.
type Policy struct {
	// UserOwned paths only people may change: worker type "agent" may not.
	UserOwned []string `yaml:"user_owned"`
	// Core paths are never part of a backfill change, under any backfill
	// profile (one whose name is "backfill" or starts with "backfill"),
	// however wide its allow list.
	Core []string `yaml:"core"`
	// Profiles maps a profile name to its allow patterns; under an active
	// profile, every touched path must match one of them.
	Profiles map[string]Profile `yaml:"profiles"`
	// KeyRules: a touched path matching a rule's Paths needs all of its
	// Keys held by the committer.
	KeyRules []KeyRule `yaml:"key_rules"`
	// ProtectedBranches are branch-name patterns ("main", "release/*") that
	// take no direct commits.
	ProtectedBranches []string `yaml:"protected_branches"`
	// IgnoreCase matches paths case-insensitively (core.ignorecase): the
	// repository's, not the file's.
	IgnoreCase bool `yaml:"-"`
}

// Profile is one scope profile: the paths a change under it may touch.
type Profile struct {
	Allow []string `yaml:"allow"`
}

// KeyRule says that changing any path matching Paths needs every one of
// Keys (logical lock keys such as "db:migration-slot") held.
type KeyRule struct {
	Paths []string `yaml:"paths"`
	Keys  []string `yaml:"keys"`
}

// Subject is who commits, under which profile, to which branch.
type Subject struct {
	// WorkerType is "human" or "agent". Anything but "human" is treated
	// as an agent, so a caller that forgot to say fails closed.
	WorkerType string
	// Profile is the active scope profile; "" means none.
	Profile string
	// Branch is the branch committed or pushed to, short ("main") or full
	// ("refs/heads/main"); "" (unknown, detached HEAD) skips the branch rule.
	Branch string
	// HasKey reports whether the committer holds a logical lock key. nil
	// means the committer holds nothing.
	HasKey func(key string) bool
}

// Violation is one reason to refuse a change. A violation is data, not an
// error.
type Violation struct {
	Path    string `json:"path,omitempty"`    // repo-relative path; "" for branch- and profile-level violations
	Rule    string `json:"rule"`              // one of the Rule* ids
	Pattern string `json:"pattern,omitempty"` // the pattern that matched; for "profile", the allow list
	Key     string `json:"key,omitempty"`     // for "key_rule": the key not held
	Reason  string `json:"reason"`            // one human sentence
}

// Compiled is a Policy with every pattern compiled once. It is immutable and
// safe for concurrent use. The zero Compiled is the empty policy.
type Compiled struct {
	m        *pathmatch.Matcher // every path pattern of the policy, tagged by tags
	tags     []tag
	branches *pathmatch.Matcher
	profiles map[string]int // name -> index into profs
	profs    []profile
	names    []string // sorted profile names
	rules    []keyRule
	keys     []string // distinct keys of all rules, in order of appearance
}

type group uint8

const (
	groupUserOwned group = iota
	groupCore
	groupAllow
	groupKey
)

// tag says where pattern i of Compiled.m came from.
type tag struct {
	group group
	id    int // groupAllow: profile index; groupKey: rule index
}

type profile struct {
	name    string
	summary string // the allow list, for messages
}

type keyRule struct {
	keys []int // indices into Compiled.keys
}

// Compile validates every pattern of p and compiles them. Errors name the
// offending entry the way .lockgate.yaml spells it ("scope.core[1]: ...").
func Compile(p Policy) (*Compiled, error) {
	c := &Compiled{profiles: map[string]int{}}
	var pats []string
	add := func(field string, list []string, g group, id int) error {
		for i, s := range list {
			if s == "" {
				return fmt.Errorf("%s[%d]: empty pattern", field, i)
			}
			pats = append(pats, s)
			c.tags = append(c.tags, tag{group: g, id: id})
		}
		return nil
	}
	if err := add("scope.user_owned", p.UserOwned, groupUserOwned, 0); err != nil {
		return nil, err
	}
	if err := add("scope.core", p.Core, groupCore, 0); err != nil {
		return nil, err
	}
	for name := range p.Profiles {
		c.names = append(c.names, name)
	}
	slices.Sort(c.names)
	for i, name := range c.names {
		allow := p.Profiles[name].Allow
		c.profiles[name] = i
		c.profs = append(c.profs, profile{name: name, summary: strings.Join(allow, ", ")})
		if err := add("scope.profiles."+name+".allow", allow, groupAllow, i); err != nil {
			return nil, err
		}
	}
	keyIdx := map[string]int{}
	for i, r := range p.KeyRules {
		field := fmt.Sprintf("scope.key_rules[%d]", i)
		if err := add(field+".paths", r.Paths, groupKey, i); err != nil {
			return nil, err
		}
		var kr keyRule
		for j, k := range r.Keys {
			if k == "" {
				return nil, fmt.Errorf("%s.keys[%d]: empty key", field, j)
			}
			n, ok := keyIdx[k]
			if !ok {
				n = len(c.keys)
				keyIdx[k] = n
				c.keys = append(c.keys, k)
			}
			if !slices.Contains(kr.keys, n) {
				kr.keys = append(kr.keys, n)
			}
		}
		c.rules = append(c.rules, kr)
	}
	m, err := pathmatch.NewMatcher(pats, p.IgnoreCase)
	if err != nil {
		return nil, fieldError(err, c.tags, c.names)
	}
	c.m = m
	for i, s := range p.ProtectedBranches {
		if s == "" {
			return nil, fmt.Errorf("scope.protected_branches[%d]: empty pattern", i)
		}
	}
	// Under core.ignorecase a loose ref is a file: refs/heads/MAIN is
	// refs/heads/main, and committing on it must not escape the
	// protection. Folding can only protect more, never less.
	if c.branches, err = pathmatch.NewMatcher(p.ProtectedBranches, p.IgnoreCase); err != nil {
		var pe *pathmatch.PatternError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("scope.protected_branches[%d]: %w", pe.Index, err)
		}
		return nil, err
	}
	return c, nil
}

// fieldError turns a *pathmatch.PatternError from the combined matcher back into the
// field of the policy it came from.
func fieldError(err error, tags []tag, names []string) error {
	var pe *pathmatch.PatternError
	if !errors.As(err, &pe) {
		return err
	}
	// Find the position of pe.Index inside its own list.
	t := tags[pe.Index]
	pos := 0
	for i := pe.Index - 1; i >= 0 && tags[i] == t; i-- {
		pos++
	}
	var field string
	switch t.group {
	case groupUserOwned:
		field = "scope.user_owned"
	case groupCore:
		field = "scope.core"
	case groupAllow:
		field = "scope.profiles." + names[t.id] + ".allow"
	case groupKey:
		field = fmt.Sprintf("scope.key_rules[%d].paths", t.id)
	}
	return fmt.Errorf("%s[%d]: %w", field, pos, &pathmatch.PatternError{Index: pos, Pattern: pe.Pattern})
}

// Profiles returns the names of the defined profiles, sorted.
func (c *Compiled) Profiles() []string { return slices.Clone(c.names) }

// HasProfile reports whether a profile of that name is defined.
func (c *Compiled) HasProfile(name string) bool {
	_, ok := c.profiles[name]
	return ok
}

// IsBackfillProfile reports whether a profile name denotes a backfill
// profile, where core files are refused: "backfill" or any name that starts
// with it ("backfill-bridge").
func IsBackfillProfile(name string) bool { return strings.HasPrefix(name, "backfill") }

// Evaluate checks a change set: paths are the repo-relative, normalized
// paths the change touches (both sides of a rename), in any order. It
// returns the violations sorted by (Path, Rule, Key), one per path, rule and
// key (a path listed twice is reported once); nil when the change is in
// scope. Empty paths are skipped.
//
// Per path, in that order:
//   - core: the path matches Core and the profile is a backfill profile
//     (IsBackfillProfile), whoever commits;
//   - key_rule: one violation per key of a matching rule that HasKey denies,
//     naming the first rule pattern that asked for it;
//   - profile: a profile is active and none of its allow patterns matches;
//   - user_owned: the path matches UserOwned and WorkerType is not "human".
//
// Before them, with Path "": protected_branch when Branch matches
// ProtectedBranches, and unknown_profile when Profile names no defined
// profile. An unknown profile is reported once, not per path, and the other
// rules still apply (core too, when the name starts with "backfill"), so a
// typo in a profile name never hides a user-owned file.
//
// HasKey is called at most once per key.
func (c *Compiled) Evaluate(paths []string, s Subject) []Violation {
	out := c.branchViolations(nil, s.Branch)
	prof, out := c.activeProfile(out, s.Profile)
	e := c.newEvaluation(s, prof)

	// Walk the paths in sorted order and emit each path's violations in
	// rule order (core < key_rule < profile < user_owned), so the result
	// comes out sorted by (Path, Rule, Key) without sorting violations, and
	// a path listed twice is seen twice in a row.
	order := sortedOrder(paths)
	var buf [32]int
	scratch := buf[:0] // grows to the most matches of any path, then is reused
	prev := ""
	for n := range paths {
		path := paths[n]
		if order != nil {
			path = paths[order[n]]
		}
		if path == "" || path == prev {
			continue
		}
		prev = path
		scratch = c.m.AppendMatches(scratch[:0], path)
		out = e.path(out, path, scratch)
	}
	return out
}

// branchViolations appends protected_branch when branch, full or short,
// matches ProtectedBranches.
func (c *Compiled) branchViolations(out []Violation, branch string) []Violation {
	if branch == "" {
		return out
	}
	short := strings.TrimPrefix(branch, "refs/heads/")
	i, ok := c.branches.Match(branch)
	if !ok && short != branch {
		i, ok = c.branches.Match(short)
	}
	if !ok {
		return out
	}
	pat := c.branches.Pattern(i)
	return appendViolation(out, Violation{
		Rule:    RuleProtectedBranch,
		Pattern: pat,
		Reason:  fmt.Sprintf("branch %s is protected: commit on another branch and merge it (scope.protected_branches: %s)", short, pat),
	})
}

// activeProfile returns the index of the defined profile named name, or -1
// for none; a name that no profile has appends unknown_profile.
func (c *Compiled) activeProfile(out []Violation, name string) (int, []Violation) {
	if name == "" {
		return -1, out
	}
	if i, ok := c.profiles[name]; ok {
		return i, out
	}
	defined := "none are defined"
	if len(c.names) > 0 {
		defined = "defined: " + strings.Join(c.names, ", ")
	}
	return -1, appendViolation(out, Violation{
		Rule:   RuleUnknownProfile,
		Reason: fmt.Sprintf("profile %q is not defined in scope.profiles (%s)", name, defined),
	})
}

// sortedOrder returns the indexes of paths in sorted order, or nil when
// paths are sorted already.
func sortedOrder(paths []string) []int {
	if slices.IsSorted(paths) {
		return nil
	}
	order := make([]int, len(paths))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(paths[a], paths[b]) })
	return order
}

// evaluation is what one Evaluate knows of its subject, built once and
// used for every path.
type evaluation struct {
	c        *Compiled
	s        Subject
	prof     int // index of the active, defined profile; -1 for none
	agent    bool
	backfill bool

	// Suffixes of the reasons, built once per Evaluate rather than per path.
	profileReason, coreReason string

	held    []int8 // per key: 0 unknown, 1 held, -1 not held
	missing []missingKey
}

// missingKey is a key a rule asks for and the subject does not hold.
type missingKey struct {
	k   int    // index into c.keys
	pat string // the rule's pattern that matched
}

func (c *Compiled) newEvaluation(s Subject, prof int) *evaluation {
	e := &evaluation{
		c:        c,
		s:        s,
		prof:     prof,
		agent:    s.WorkerType != WorkerHuman,
		backfill: IsBackfillProfile(s.Profile),
		held:     make([]int8, len(c.keys)),
	}
	if prof >= 0 {
		p := c.profs[prof]
		allows := "nothing"
		if p.summary != "" {
			allows = "only " + p.summary
		}
		e.profileReason = fmt.Sprintf(" is outside profile %q, which allows %s (scope.profiles.%s.allow)", p.name, allows, p.name)
	}
	if e.backfill {
		e.coreReason = fmt.Sprintf("; profile %q)", s.Profile)
	}
	return e
}

// hasKey asks HasKey about key k at most once per Evaluate: it may consult
// a lock store.
func (e *evaluation) hasKey(k int) bool {
	if e.held[k] == 0 {
		e.held[k] = -1
		if e.s.HasKey != nil && e.s.HasKey(e.c.keys[k]) {
			e.held[k] = 1
		}
	}
	return e.held[k] == 1
}

// path appends the violations of one path, whose matches in the combined
// matcher are got, in rule order.
func (e *evaluation) path(out []Violation, path string, got []int) []Violation {
	c := e.c
	allowed := false
	userOwned, core := -1, -1
	lastRule := -1
	e.missing = e.missing[:0]
	for _, i := range got {
		t := c.tags[i]
		switch t.group {
		case groupUserOwned:
			if userOwned < 0 {
				userOwned = i
			}
		case groupCore:
			if core < 0 {
				core = i
			}
		case groupAllow:
			allowed = allowed || t.id == e.prof
		case groupKey:
			if t.id == lastRule {
				continue // one rule, several of its patterns match
			}
			lastRule = t.id
			for _, k := range c.rules[t.id].keys {
				if !e.hasKey(k) && !slices.ContainsFunc(e.missing, func(m missingKey) bool { return m.k == k }) {
					// Two rules asking for one key: report it once, with the first rule's pattern.
					e.missing = append(e.missing, missingKey{k: k, pat: c.m.Pattern(i)})
				}
			}
		}
	}
	if e.backfill && core >= 0 {
		pat := c.m.Pattern(core)
		out = appendViolation(out, Violation{
			Path:    path,
			Rule:    RuleCore,
			Pattern: pat,
			Reason:  path + " is a core file: core files are never part of a backfill change, whatever the profile (scope.core" + patternNote(path, pat) + e.coreReason,
		})
	}
	if len(e.missing) > 1 {
		slices.SortFunc(e.missing, func(a, b missingKey) int { return strings.Compare(c.keys[a.k], c.keys[b.k]) })
	}
	for _, m := range e.missing {
		key := c.keys[m.k]
		out = appendViolation(out, Violation{
			Path:    path,
			Rule:    RuleKeyRule,
			Pattern: m.pat,
			Key:     key,
			Reason:  path + " needs lock " + key + ", which you do not hold (scope.key_rules: " + m.pat + ")",
		})
	}
	if e.prof >= 0 && !allowed {
		out = appendViolation(out, Violation{
			Path:    path,
			Rule:    RuleProfile,
			Pattern: c.profs[e.prof].summary,
			Reason:  path + e.profileReason,
		})
	}
	if e.agent && userOwned >= 0 {
		pat := c.m.Pattern(userOwned)
		out = appendViolation(out, Violation{
			Path:    path,
			Rule:    RuleUserOwned,
			Pattern: pat,
			Reason:  path + " is user-owned: only people may change it (scope.user_owned" + patternNote(path, pat) + ")",
		})
	}
	return out
}

// appendViolation appends v, doubling the capacity when full: a change
// where most paths violate a profile yields as many violations as paths,
// and append's gentler growth of large slices copies them several times.
func appendViolation(out []Violation, v Violation) []Violation {
	if len(out) == cap(out) {
		out = slices.Grow(out, max(len(out), 8))
	}
	return append(out, v)
}

// patternNote names the matching pattern unless it is the path itself.
func patternNote(path, pattern string) string {
	if path == pattern {
		return ""
	}
	return ": " + pattern
}
