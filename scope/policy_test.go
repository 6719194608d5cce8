package scope

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// seedPolicy is the policy of the orchestrator locking and backfill document
// (seed 003), plus a key rule and protected branches from docs/config.md (Keys).
func seedPolicy() Policy {
	return Policy{
		UserOwned: []string{"DESIGN_DOCUMENT.md"},
		Core: []string{
			"bridge/loop.py",
			"bridge/patch_integration.py",
			"bridge/scheduler.py",
			"bridge/design_doc.py",
			"bridge/merge_resolver.py",
			"bridge/loop_pkg/**",
			"DESIGN_DOCUMENT.md",
		},
		Profiles: map[string]Profile{
			"backfill":        {Allow: []string{"tests/**", "docs/**", ".github/**"}},
			"backfill-bridge": {Allow: []string{"tests/**", "docs/**", "bridge/**", ".github/**"}},
		},
		KeyRules: []KeyRule{
			{Paths: []string{"migrations/**"}, Keys: []string{"db:migration-slot"}},
		},
		ProtectedBranches: []string{"main", "release/*"},
	}
}

func mustCompile(t testing.TB, p Policy) *Compiled {
	t.Helper()
	c, err := Compile(p)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return c
}

// brief renders violations as "path rule [key]" for compact expectations.
func brief(vs []Violation) []string {
	out := []string{}
	for _, v := range vs {
		s := v.Path + " " + v.Rule
		if v.Key != "" {
			s += " " + v.Key
		}
		out = append(out, s)
	}
	return out
}

// checkSorted fails unless vs is strictly sorted by (Path, Rule, Key): the
// order Evaluate promises, with no repeats.
func checkSorted(t testing.TB, vs []Violation) {
	t.Helper()
	for i := 1; i < len(vs); i++ {
		a, b := vs[i-1], vs[i]
		if cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Rule, b.Rule), strings.Compare(a.Key, b.Key)) >= 0 {
			t.Fatalf("violations %d and %d out of order or repeated: %+v, %+v", i-1, i, a, b)
		}
	}
}

func holds(keys ...string) func(string) bool {
	return func(k string) bool { return slices.Contains(keys, k) }
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	seed := mustCompile(t, seedPolicy())
	ci := seedPolicy()
	ci.IgnoreCase = true
	seedCI := mustCompile(t, ci)
	empty := mustCompile(t, Policy{})

	human := Subject{WorkerType: WorkerHuman}
	agent := Subject{WorkerType: WorkerAgent}
	in := func(s Subject, profile string) Subject { s.Profile = profile; return s }
	on := func(s Subject, branch string) Subject { s.Branch = branch; return s }

	tests := []struct {
		name    string
		c       *Compiled
		paths   []string
		subject Subject
		want    []string
	}{
		// Seed 003: user-owned files are read-only for agents.
		{name: "DESIGN_DOCUMENT.md refused for agents", c: seed, paths: []string{"DESIGN_DOCUMENT.md"}, subject: agent, want: []string{"DESIGN_DOCUMENT.md user_owned"}},
		{name: "DESIGN_DOCUMENT.md allowed for humans", c: seed, paths: []string{"DESIGN_DOCUMENT.md"}, subject: human, want: []string{}},
		{name: "unknown worker type fails closed", c: seed, paths: []string{"DESIGN_DOCUMENT.md"}, subject: Subject{}, want: []string{"DESIGN_DOCUMENT.md user_owned"}},

		// Seed 003: backfill scope and orchestrator core.
		{name: "bridge/loop.py refused under backfill-bridge (core)", c: seed, paths: []string{"bridge/loop.py"}, subject: in(agent, "backfill-bridge"), want: []string{"bridge/loop.py core"}},
		{name: "bridge/util.py allowed under backfill-bridge", c: seed, paths: []string{"bridge/util.py"}, subject: in(agent, "backfill-bridge"), want: []string{}},
		{name: "bridge/util.py refused under backfill", c: seed, paths: []string{"bridge/util.py"}, subject: in(agent, "backfill"), want: []string{"bridge/util.py profile"}},
		{name: "tests/x.py allowed under backfill", c: seed, paths: []string{"tests/x.py"}, subject: in(agent, "backfill"), want: []string{}},
		{name: "tests/x.py allowed under backfill-bridge", c: seed, paths: []string{"tests/x.py"}, subject: in(agent, "backfill-bridge"), want: []string{}},
		{name: "bridge/loop_pkg/a.py refused under backfill", c: seed, paths: []string{"bridge/loop_pkg/a.py"}, subject: in(agent, "backfill"), want: []string{"bridge/loop_pkg/a.py core", "bridge/loop_pkg/a.py profile"}},
		{name: "bridge/loop_pkg/a.py refused under backfill-bridge", c: seed, paths: []string{"bridge/loop_pkg/a.py"}, subject: in(agent, "backfill-bridge"), want: []string{"bridge/loop_pkg/a.py core"}},
		{name: "core is refused for humans in a backfill profile too", c: seed, paths: []string{"bridge/scheduler.py"}, subject: in(human, "backfill-bridge"), want: []string{"bridge/scheduler.py core"}},
		{name: "core is fine without a profile", c: seed, paths: []string{"bridge/loop.py", "bridge/loop_pkg/a.py"}, subject: human, want: []string{}},
		{name: "user-owned and core in backfill", c: seed, paths: []string{"DESIGN_DOCUMENT.md"}, subject: in(agent, "backfill-bridge"), want: []string{"DESIGN_DOCUMENT.md core", "DESIGN_DOCUMENT.md profile", "DESIGN_DOCUMENT.md user_owned"}},
		{name: "a/ prefix is not stripped here", c: seed, paths: []string{"a/bridge/loop.py"}, subject: in(agent, "backfill-bridge"), want: []string{"a/bridge/loop.py profile"}},

		// Key rules.
		{name: "migration without the key", c: seed, paths: []string{"migrations/0001_init.sql"}, subject: human, want: []string{"migrations/0001_init.sql key_rule db:migration-slot"}},
		{name: "migration with the key", c: seed, paths: []string{"migrations/0001_init.sql"}, subject: Subject{WorkerType: WorkerHuman, HasKey: holds("db:migration-slot")}, want: []string{}},
		{name: "migration with another key", c: seed, paths: []string{"migrations/0001_init.sql"}, subject: Subject{WorkerType: WorkerHuman, HasKey: holds("db:schema:users")}, want: []string{"migrations/0001_init.sql key_rule db:migration-slot"}},

		// Protected branches.
		{name: "commit to main", c: seed, paths: []string{"README.md"}, subject: on(human, "main"), want: []string{" protected_branch"}},
		{name: "commit to refs/heads/main", c: seed, paths: nil, subject: on(human, "refs/heads/main"), want: []string{" protected_branch"}},
		{name: "commit to release/1.2", c: seed, paths: nil, subject: on(human, "release/1.2"), want: []string{" protected_branch"}},
		{name: "release glob is one level", c: seed, paths: nil, subject: on(human, "release/1.2/hotfix"), want: []string{}},
		{name: "feature branch", c: seed, paths: []string{"README.md"}, subject: on(human, "feature/x"), want: []string{}},
		{name: "branch names fold under ignorecase", c: seedCI, paths: nil, subject: on(human, "Main"), want: []string{" protected_branch"}},
		{name: "branch names are case-sensitive", c: seed, paths: nil, subject: on(human, "Main"), want: []string{}},
		{name: "detached HEAD skips the branch rule", c: seed, paths: []string{"README.md"}, subject: on(human, ""), want: []string{}},

		// Profiles.
		{name: "unknown profile", c: seed, paths: []string{"tests/x.py", "src/a.go"}, subject: in(human, "nope"), want: []string{" unknown_profile"}},
		{name: "unknown profile still checks the rest", c: seed, paths: []string{"DESIGN_DOCUMENT.md"}, subject: in(agent, "nope"), want: []string{" unknown_profile", "DESIGN_DOCUMENT.md user_owned"}},
		{name: "undefined backfill-named profile still refuses core", c: seed, paths: []string{"bridge/loop.py"}, subject: in(human, "backfill-lint"), want: []string{" unknown_profile", "bridge/loop.py core"}},

		// Case-insensitive matching (core.ignorecase).
		{name: "ignore case: user-owned", c: seedCI, paths: []string{"design_document.md"}, subject: agent, want: []string{"design_document.md user_owned"}},
		{name: "ignore case: profile allow", c: seedCI, paths: []string{"Tests/X.py", "DOCS/a.md"}, subject: in(agent, "backfill"), want: []string{}},
		{name: "ignore case: core", c: seedCI, paths: []string{"Bridge/Loop_Pkg/a.py"}, subject: in(agent, "backfill-bridge"), want: []string{"Bridge/Loop_Pkg/a.py core"}},
		{name: "case-sensitive by default", c: seed, paths: []string{"design_document.md", "Tests/x.py"}, subject: in(agent, "backfill"), want: []string{"Tests/x.py profile", "design_document.md profile"}},

		// Ordering and de-duplication.
		{name: "stable order whatever the input order", c: seed,
			paths:   []string{"zz/a", "migrations/2.sql", "DESIGN_DOCUMENT.md", "bridge/loop.py", "aa/b", "migrations/1.sql"},
			subject: Subject{WorkerType: WorkerAgent, Profile: "backfill", Branch: "main"},
			want: []string{
				" protected_branch",
				"DESIGN_DOCUMENT.md core", "DESIGN_DOCUMENT.md profile", "DESIGN_DOCUMENT.md user_owned",
				"aa/b profile",
				"bridge/loop.py core", "bridge/loop.py profile",
				"migrations/1.sql key_rule db:migration-slot", "migrations/1.sql profile",
				"migrations/2.sql key_rule db:migration-slot", "migrations/2.sql profile",
				"zz/a profile",
			}},
		{name: "one violation per path and rule", c: seed, paths: []string{"bridge/loop.py", "bridge/loop.py", "DESIGN_DOCUMENT.md", "DESIGN_DOCUMENT.md"}, subject: in(agent, "backfill-bridge"),
			want: []string{"DESIGN_DOCUMENT.md core", "DESIGN_DOCUMENT.md profile", "DESIGN_DOCUMENT.md user_owned", "bridge/loop.py core"}},
		{name: "empty paths are skipped", c: seed, paths: []string{"", "tests/a.py"}, subject: in(agent, "backfill"), want: []string{}},

		// Empty policy.
		{name: "empty policy refuses nothing", c: empty, paths: []string{"DESIGN_DOCUMENT.md", "bridge/loop.py", "migrations/1.sql"}, subject: Subject{WorkerType: WorkerAgent, Branch: "main"}, want: []string{}},
		{name: "empty policy, no paths", c: empty, paths: nil, subject: agent, want: []string{}},
		{name: "zero Compiled is the empty policy", c: &Compiled{}, paths: []string{"DESIGN_DOCUMENT.md"}, subject: Subject{WorkerType: WorkerAgent, Branch: "main"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.c.Evaluate(tt.paths, tt.subject)
			checkSorted(t, got)
			if b := brief(got); !slices.Equal(b, tt.want) {
				t.Errorf("Evaluate(%q, %+v) =\n  %q\nwant\n  %q", tt.paths, tt.subject, b, tt.want)
			}
			for _, v := range got {
				if v.Reason == "" || strings.Contains(v.Reason, "\n") {
					t.Errorf("violation %+v: reason must be one non-empty line", v)
				}
			}
		})
	}
}

func TestEvaluateKeyRules(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, Policy{KeyRules: []KeyRule{
		{Paths: []string{"migrations/**"}, Keys: []string{"db:migration-slot"}},
		{Paths: []string{"migrations/users/**", "**/users.sql"}, Keys: []string{"db:schema:users", "db:migration-slot"}},
		{Paths: []string{"openapi/v1.yaml"}, Keys: []string{"contract:openapi/v1.yaml", "api:GET /v1/users"}},
	}})
	tests := []struct {
		name  string
		paths []string
		keys  []string
		want  []string
	}{
		{name: "one rule, key missing", paths: []string{"migrations/1.sql"}, want: []string{"migrations/1.sql key_rule db:migration-slot"}},
		{name: "one rule, key held", paths: []string{"migrations/1.sql"}, keys: []string{"db:migration-slot"}, want: []string{}},
		{name: "two rules share a key: reported once", paths: []string{"migrations/users/users.sql"},
			want: []string{"migrations/users/users.sql key_rule db:migration-slot", "migrations/users/users.sql key_rule db:schema:users"}},
		{name: "all keys needed", paths: []string{"migrations/users/1.sql"}, keys: []string{"db:migration-slot"}, want: []string{"migrations/users/1.sql key_rule db:schema:users"}},
		{name: "all keys held", paths: []string{"migrations/users/1.sql"}, keys: []string{"db:migration-slot", "db:schema:users"}, want: []string{}},
		{name: "keys sorted", paths: []string{"openapi/v1.yaml"}, want: []string{"openapi/v1.yaml key_rule api:GET /v1/users", "openapi/v1.yaml key_rule contract:openapi/v1.yaml"}},
		{name: "unrelated path", paths: []string{"src/a.go"}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := c.Evaluate(tt.paths, Subject{WorkerType: WorkerAgent, HasKey: holds(tt.keys...)})
			if b := brief(got); !slices.Equal(b, tt.want) {
				t.Errorf("got %q, want %q", b, tt.want)
			}
		})
	}

	t.Run("nil HasKey holds nothing", func(t *testing.T) {
		t.Parallel()
		got := c.Evaluate([]string{"migrations/1.sql"}, Subject{WorkerType: WorkerHuman})
		if b := brief(got); !slices.Equal(b, []string{"migrations/1.sql key_rule db:migration-slot"}) {
			t.Errorf("got %q", b)
		}
	})
	t.Run("HasKey asked once per key", func(t *testing.T) {
		t.Parallel()
		asked := map[string]int{}
		has := func(k string) bool { asked[k]++; return false }
		c.Evaluate([]string{"migrations/1.sql", "migrations/2.sql", "migrations/users/3.sql"}, Subject{WorkerType: WorkerHuman, HasKey: has})
		want := map[string]int{"db:migration-slot": 1, "db:schema:users": 1}
		if fmt.Sprint(asked) != fmt.Sprint(want) {
			t.Errorf("HasKey calls = %v, want %v", asked, want)
		}
	})
}

func TestEvaluateReasons(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, seedPolicy())
	tests := []struct {
		name    string
		path    string
		subject Subject
		want    Violation
	}{
		{name: "user-owned", path: "DESIGN_DOCUMENT.md", subject: Subject{WorkerType: WorkerAgent},
			want: Violation{Path: "DESIGN_DOCUMENT.md", Rule: "user_owned", Pattern: "DESIGN_DOCUMENT.md",
				Reason: "DESIGN_DOCUMENT.md is user-owned: only people may change it (scope.user_owned)"}},
		{name: "core", path: "bridge/loop_pkg/a.py", subject: Subject{WorkerType: WorkerAgent, Profile: "backfill-bridge"},
			want: Violation{Path: "bridge/loop_pkg/a.py", Rule: "core", Pattern: "bridge/loop_pkg/**",
				Reason: `bridge/loop_pkg/a.py is a core file: core files are never part of a backfill change, whatever the profile (scope.core: bridge/loop_pkg/**; profile "backfill-bridge")`}},
		{name: "profile", path: "bridge/util.py", subject: Subject{WorkerType: WorkerAgent, Profile: "backfill"},
			want: Violation{Path: "bridge/util.py", Rule: "profile", Pattern: "tests/**, docs/**, .github/**",
				Reason: `bridge/util.py is outside profile "backfill", which allows only tests/**, docs/**, .github/** (scope.profiles.backfill.allow)`}},
		{name: "key rule", path: "migrations/1.sql", subject: Subject{WorkerType: WorkerHuman},
			want: Violation{Path: "migrations/1.sql", Rule: "key_rule", Pattern: "migrations/**", Key: "db:migration-slot",
				Reason: "migrations/1.sql needs lock db:migration-slot, which you do not hold (scope.key_rules: migrations/**)"}},
		{name: "protected branch", subject: Subject{WorkerType: WorkerHuman, Branch: "refs/heads/release/2.0"},
			want: Violation{Rule: "protected_branch", Pattern: "release/*",
				Reason: "branch release/2.0 is protected: commit on another branch and merge it (scope.protected_branches: release/*)"}},
		{name: "unknown profile", subject: Subject{WorkerType: WorkerHuman, Profile: "backfil"},
			want: Violation{Rule: "unknown_profile",
				Reason: `profile "backfil" is not defined in scope.profiles (defined: backfill, backfill-bridge)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var paths []string
			if tt.path != "" {
				paths = []string{tt.path}
			}
			got := c.Evaluate(paths, tt.subject)
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}

	t.Run("key with a space and empty allow list", func(t *testing.T) {
		t.Parallel()
		c := mustCompile(t, Policy{
			Profiles: map[string]Profile{"locked": {}},
			KeyRules: []KeyRule{{Paths: []string{"openapi/**"}, Keys: []string{"api:GET /v1/users"}}},
		})
		got := c.Evaluate([]string{"openapi/v1.yaml"}, Subject{WorkerType: WorkerHuman, Profile: "locked"})
		want := []string{
			`openapi/v1.yaml needs lock api:GET /v1/users, which you do not hold (scope.key_rules: openapi/**)`,
			`openapi/v1.yaml is outside profile "locked", which allows nothing (scope.profiles.locked.allow)`,
		}
		var reasons []string
		for _, v := range got {
			reasons = append(reasons, v.Reason)
		}
		if !slices.Equal(reasons, want) {
			t.Errorf("got %q\nwant %q", reasons, want)
		}
	})
	t.Run("no profiles defined", func(t *testing.T) {
		t.Parallel()
		got := mustCompile(t, Policy{}).Evaluate(nil, Subject{Profile: "x"})
		if len(got) != 1 || got[0].Reason != `profile "x" is not defined in scope.profiles (none are defined)` {
			t.Errorf("got %+v", got)
		}
	})
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Policy
		want string
	}{
		{name: "user_owned", p: Policy{UserOwned: []string{"a", "b[", "c"}}, want: `scope.user_owned[1]: invalid pattern "b["`},
		{name: "core", p: Policy{UserOwned: []string{"a"}, Core: []string{"x/**", "{y"}}, want: `scope.core[1]: invalid pattern "{y"`},
		{name: "profile", p: Policy{Profiles: map[string]Profile{"a": {Allow: []string{"ok"}}, "b": {Allow: []string{"ok", "ok2", `bad\`}}}}, want: `scope.profiles.b.allow[2]: invalid pattern "bad\\"`},
		{name: "key rule paths", p: Policy{KeyRules: []KeyRule{{Paths: []string{"a"}, Keys: []string{"k"}}, {Paths: []string{"[]"}, Keys: []string{"k"}}}}, want: `scope.key_rules[1].paths[0]: invalid pattern "[]"`},
		{name: "protected branches", p: Policy{ProtectedBranches: []string{"main", "release/{"}}, want: `scope.protected_branches[1]: invalid pattern "release/{"`},
		{name: "empty pattern", p: Policy{Core: []string{"a", ""}}, want: `scope.core[1]: empty pattern`},
		{name: "empty key", p: Policy{KeyRules: []KeyRule{{Paths: []string{"a"}, Keys: []string{""}}}}, want: `scope.key_rules[0].keys[0]: empty key`},
		{name: "empty branch pattern", p: Policy{ProtectedBranches: []string{""}}, want: `scope.protected_branches[0]: empty pattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.p)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Compile error = %v, want prefix %q", err, tt.want)
			}
			if strings.Contains(tt.want, "invalid pattern") && !errors.Is(err, doublestar.ErrBadPattern) {
				t.Errorf("error %v does not wrap doublestar.ErrBadPattern", err)
			}
		})
	}
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, seedPolicy())
	tests := []struct {
		name string
		got  any
		want any
	}{
		{name: "sorted names", got: c.Profiles(), want: []string{"backfill", "backfill-bridge"}},
		{name: "has backfill", got: c.HasProfile("backfill"), want: true},
		{name: "has not backfil", got: c.HasProfile("backfil"), want: false},
		{name: "has not empty", got: c.HasProfile(""), want: false},
		{name: "backfill is backfill", got: IsBackfillProfile("backfill"), want: true},
		{name: "backfill-bridge is backfill", got: IsBackfillProfile("backfill-bridge"), want: true},
		{name: "docs is not backfill", got: IsBackfillProfile("docs"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	t.Run("Profiles returns a copy", func(t *testing.T) {
		t.Parallel()
		c.Profiles()[0] = "changed"
		if c.Profiles()[0] != "backfill" {
			t.Error("Profiles exposed internal state")
		}
	})
}

// Under core.ignorecase refs/heads/MAIN is the loose ref of main: protected
// as main is. Without it, MAIN is another branch.
func TestProtectedBranchIgnoreCase(t *testing.T) {
	t.Parallel()
	for _, fold := range []bool{false, true} {
		c := mustCompile(t, Policy{ProtectedBranches: []string{"main", "release/*"}, IgnoreCase: fold})
		for _, b := range []string{"refs/heads/MAIN", "Main", "refs/heads/Release/2.0"} {
			got := c.Evaluate(nil, Subject{WorkerType: WorkerHuman, Branch: b})
			if (len(got) == 1) != fold {
				t.Errorf("ignorecase %v, branch %s: got %+v", fold, b, got)
			}
		}
	}
}

// TestUserOwnedUnicodeSpellings: under core.ignorecase every spelling of
// a people's file is that file — other case, decomposed accents, the
// Kelvin sign — as lock keys fold; without it only the exact spelling is.
func TestUserOwnedUnicodeSpellings(t *testing.T) {
	t.Parallel()
	for _, fold := range []bool{false, true} {
		c := mustCompile(t, Policy{UserOwned: []string{"docs/Été.md", "kelvin/**"}, IgnoreCase: fold})
		for _, p := range []string{"docs/été.md", "docs/E\u0301te\u0301.md", "docs/ÉTÉ.MD", "\u212Aelvin/a.txt"} {
			got := c.Evaluate([]string{p}, Subject{WorkerType: WorkerAgent})
			if (len(got) == 1) != fold {
				t.Errorf("ignorecase %v, %q: got %+v", fold, p, got)
			}
		}
	}
}
