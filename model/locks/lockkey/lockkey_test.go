package lockkey_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

var contractOpts = &lockkey.Options{ContractFiles: []string{"openapi/v1.yaml", "./openapi/v2.yaml", "gen/**/*.ts"}}

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		opt       *lockkey.Options
		canonical string
		kind      lockkey.Kind
		namespace string
		value     string
	}{
		{name: "path", in: "src/api/users.py", canonical: "src/api/users.py", kind: lockkey.KindPath, value: "src/api/users.py"},
		{name: "path leading dot slash and double slash", in: "./a//b", canonical: "a/b", kind: lockkey.KindPath, value: "a/b"},
		{name: "path dot segment", in: "a/./b", canonical: "a/b", kind: lockkey.KindPath, value: "a/b"},
		{name: "path dotdot inside repo", in: "a/../b", canonical: "b", kind: lockkey.KindPath, value: "b"},
		{name: "path deep dotdot", in: "a/b/../../c/d", canonical: "c/d", kind: lockkey.KindPath, value: "c/d"},
		{name: "path repeated dot slash", in: "././a", canonical: "a", kind: lockkey.KindPath, value: "a"},
		{name: "path dotfile", in: ".github/workflows/ci.yml", canonical: ".github/workflows/ci.yml", kind: lockkey.KindPath, value: ".github/workflows/ci.yml"},
		{name: "path gitignore is not .git", in: ".gitignore", canonical: ".gitignore", kind: lockkey.KindPath, value: ".gitignore"},
		{name: "path inner space", in: "docs/my file.md", canonical: "docs/my file.md", kind: lockkey.KindPath, value: "docs/my file.md"},
		{name: "path unicode", in: "docs/café.md", canonical: "docs/café.md", kind: lockkey.KindPath, value: "docs/café.md"},
		{name: "path colon after slash", in: "docs/a:b.md", canonical: "docs/a:b.md", kind: lockkey.KindPath, value: "docs/a:b.md"},
		{name: "path uppercase unknown namespace", in: "README:x", canonical: "README:x", kind: lockkey.KindPath, value: "README:x"},
		{name: "pattern doublestar", in: "src/api/**", canonical: "src/api/**", kind: lockkey.KindPattern, value: "src/api/**"},
		{name: "pattern cleaned", in: "./src//api/./*.py", canonical: "src/api/*.py", kind: lockkey.KindPattern, value: "src/api/*.py"},
		{name: "pattern braces with slash", in: "{src/a,docs}/*.md", canonical: "{src/a,docs}/*.md", kind: lockkey.KindPattern, value: "{src/a,docs}/*.md"},
		{name: "pattern class", in: "src/[!_]*.py", canonical: "src/[!_]*.py", kind: lockkey.KindPattern, value: "src/[!_]*.py"},
		{name: "pattern literal bracket via class", in: "pages/[[]id].tsx", canonical: "pages/[[]id].tsx", kind: lockkey.KindPattern, value: "pages/[[]id].tsx"},
		{name: "pattern everything", in: "**", canonical: "**", kind: lockkey.KindPattern, value: "**"},
		{name: "reserved workflow", in: "workflow", canonical: "workflow", kind: lockkey.KindReserved, value: "workflow"},
		{name: "reserved claim", in: "claim", canonical: "claim", kind: lockkey.KindReserved, value: "claim"},
		{name: "api", in: "api:GET /v1/users", canonical: "api:GET /v1/users", kind: lockkey.KindAPI, namespace: "api", value: "GET /v1/users"},
		{name: "api double slash collapsed", in: "api:POST //v1//users", canonical: "api:POST /v1/users", kind: lockkey.KindAPI, namespace: "api", value: "POST /v1/users"},
		{name: "api template", in: "api:DELETE /v1/users/{id}", canonical: "api:DELETE /v1/users/{id}", kind: lockkey.KindAPI, namespace: "api", value: "DELETE /v1/users/{id}"},
		{name: "db migration slot", in: "db:migration-slot", canonical: "db:migration-slot", kind: lockkey.KindDB, namespace: "db", value: "migration-slot"},
		{name: "db schema", in: "db:schema:user_accounts2", canonical: "db:schema:user_accounts2", kind: lockkey.KindDB, namespace: "db", value: "schema:user_accounts2"},
		{name: "event", in: "event:user.created", canonical: "event:user.created", kind: lockkey.KindEvent, namespace: "event", value: "user.created"},
		{name: "event single segment", in: "event:billing_v2-x", canonical: "event:billing_v2-x", kind: lockkey.KindEvent, namespace: "event", value: "billing_v2-x"},
		{name: "flag wildcard", in: "flag:billing/*", canonical: "flag:billing/*", kind: lockkey.KindFlag, namespace: "flag", value: "billing/*"},
		{name: "flag literal", in: "flag:billing/new-checkout", canonical: "flag:billing/new-checkout", kind: lockkey.KindFlag, namespace: "flag", value: "billing/new-checkout"},
		{name: "env", in: "env:shared-fixtures", canonical: "env:shared-fixtures", kind: lockkey.KindEnv, namespace: "env", value: "shared-fixtures"},
		{name: "env path like", in: "env:tmp/Shared_dir.v2", canonical: "env:tmp/Shared_dir.v2", kind: lockkey.KindEnv, namespace: "env", value: "tmp/Shared_dir.v2"},
		{name: "env digits inside a name", in: "env:redis6-fixtures", canonical: "env:redis6-fixtures", kind: lockkey.KindEnv, namespace: "env", value: "redis6-fixtures"},
		{name: "contract unchecked without options", in: "contract:openapi/v9.yaml", canonical: "contract:openapi/v9.yaml", kind: lockkey.KindContract, namespace: "contract", value: "openapi/v9.yaml"},
		{name: "contract listed", in: "contract:openapi/v1.yaml", opt: contractOpts, canonical: "contract:openapi/v1.yaml", kind: lockkey.KindContract, namespace: "contract", value: "openapi/v1.yaml"},
		{name: "contract listed with dot slash in config", in: "contract:openapi/v2.yaml", opt: contractOpts, canonical: "contract:openapi/v2.yaml", kind: lockkey.KindContract, namespace: "contract", value: "openapi/v2.yaml"},
		{name: "contract cleaned", in: "contract:./openapi//v1.yaml", opt: contractOpts, canonical: "contract:openapi/v1.yaml", kind: lockkey.KindContract, namespace: "contract", value: "openapi/v1.yaml"},
		{name: "contract generated artifact pattern", in: "contract:gen/client/api.ts", opt: contractOpts, canonical: "contract:gen/client/api.ts", kind: lockkey.KindContract, namespace: "contract", value: "gen/client/api.ts"},
		{name: "feature pause", in: "feature:FEAT-123:pause", canonical: "feature:FEAT-123:pause", kind: lockkey.KindFeature, namespace: "feature", value: "FEAT-123:pause"},
		{name: "feature release", in: "feature:f.1_x:release", canonical: "feature:f.1_x:release", kind: lockkey.KindFeature, namespace: "feature", value: "f.1_x:release"},
		{name: "feature custom purpose", in: "feature:F1:qa", opt: &lockkey.Options{FeaturePurposes: []string{"pause", "qa"}}, canonical: "feature:F1:qa", kind: lockkey.KindFeature, namespace: "feature", value: "F1:qa"},
		{name: "task", in: "task:TASK-001", canonical: "task:TASK-001", kind: lockkey.KindTask, namespace: "task", value: "TASK-001"},
		{name: "activity", in: "activity:WI-001-A1", canonical: "activity:WI-001-A1", kind: lockkey.KindActivity, namespace: "activity", value: "WI-001-A1"},
		{name: "hot", in: "hot:api.py", canonical: "hot:api.py", kind: lockkey.KindHot, namespace: "hot", value: "api.py"},
		{name: "file", in: "file:api.py:3f2a9c1e", canonical: "file:api.py:3f2a9c1e", kind: lockkey.KindFile, namespace: "file", value: "api.py:3f2a9c1e"},
		{name: "backfill", in: "backfill:type:lint", canonical: "backfill:type:lint", kind: lockkey.KindBackfill, namespace: "backfill", value: "type:lint"},
		{name: "custom namespace", in: "queue:emails", opt: &lockkey.Options{Namespaces: []string{"api", "queue:"}}, canonical: "queue:emails", kind: lockkey.Kind("queue"), namespace: "queue", value: "emails"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, err := lockkey.Parse(tt.in, tt.opt)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.in, err)
			}
			want := lockkey.Key{Canonical: tt.canonical, Kind: tt.kind, Namespace: tt.namespace, Value: tt.value}
			if k != want {
				t.Fatalf("Parse(%q) = %+v, want %+v", tt.in, k, want)
			}
			again, err := lockkey.Canonical(k.Canonical, tt.opt)
			if err != nil || again != k.Canonical {
				t.Fatalf("not idempotent: Canonical(%q) = %q, %v", k.Canonical, again, err)
			}
			if got := lockkey.Namespace(k.Canonical); got != tt.namespace {
				t.Errorf("Namespace(%q) = %q, want %q", k.Canonical, got, tt.namespace)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		in           string
		opt          *lockkey.Options
		reason       string // substring of the message
		expected     string // Error.Expected; "" when no key can be suggested
		form         string // substring showing the expected form when expected is ""
		notPermitted bool
	}{
		{name: "empty", in: "", reason: "empty key", form: "src/app.py"},
		{name: "blank", in: "   ", reason: "blank key", form: "api:GET /v1/users"},
		{name: "trailing whitespace", in: "src/a.py ", reason: "whitespace", expected: "src/a.py"},
		{name: "trailing newline", in: "src/a.py\n", reason: "whitespace", expected: "src/a.py"},
		{name: "inner tab", in: "src/a\tb.py", reason: "control character U+0009"},
		{name: "leading whitespace", in: " api:GET /v1/users", reason: "whitespace", expected: "api:GET /v1/users"},
		{name: "whitespace around a bad key reports the bad key", in: " api:get /x ", reason: "method must be uppercase", expected: "api:GET /x"},
		{name: "NUL", in: "a\x00b", reason: "control character U+0000"},
		{name: "newline", in: "a\nb", reason: "control character"},
		{name: "bidi override", in: "a\u202eb", reason: "control character"},
		{name: "zero width space", in: "src/a\u200bb.py", reason: "control character U+200B"},
		{name: "line separator", in: "src/a\u2028b.py", reason: "control character U+2028"},
		{name: "byte order mark", in: "api:GET /v1/\ufeffusers", reason: "control character"},
		{name: "C1 CSI", in: "event:a\u009bb", reason: "control character"},
		{name: "invalid UTF-8", in: "a\xffb", reason: "UTF-8"},
		{name: "too long", in: strings.Repeat("a", lockkey.MaxKeyLen+1), reason: "longer than"},
		{name: "absolute", in: "/src/a.py", reason: "absolute path", expected: "src/a.py"},
		{name: "absolute root", in: "/", reason: "absolute path", form: "repo-relative path"},
		{name: "windows absolute", in: `C:\src\a.py`, reason: "absolute Windows path", form: "repo-relative path"},
		{name: "backslash", in: `src\api\a.py`, reason: "backslashes", expected: "src/api/a.py"},
		{name: "escape", in: "../a", reason: "escapes the repository", form: "repo-relative path"},
		{name: "escape after descent", in: "a/../../b", reason: "escapes the repository", form: "repo-relative path"},
		{name: "dotdot alone", in: "..", reason: "escapes the repository"},
		{name: "root dot", in: ".", reason: "repository root", expected: "**"},
		{name: "root by dotdot", in: "a/..", reason: "repository root", expected: "**"},
		{name: "trailing slash", in: "src/api/", reason: "trailing /", expected: "src/api/**"},
		{name: "trailing slashes cleaned", in: ".//src//", reason: "trailing /", expected: "src/**"},
		{name: "directory by dot", in: "src/.", reason: "names a directory", expected: "src/**"},
		{name: "directory by dotdot", in: "src/a/..", reason: "names a directory", expected: "src/**"},
		{name: "dot git", in: ".git/config", reason: ".git is git's own directory"},
		{name: "nested dot git", in: "sub/.git/HEAD", reason: ".git is git's own directory"},
		{name: "dot git any case", in: "sub/.GIT", reason: ".git is git's own directory"},
		{name: "dot git NTFS trailing dot", in: ".git./config", reason: ".git is git's own directory"},
		{name: "dot git NTFS trailing space", in: ".git /config", reason: ".git is git's own directory"},
		{name: "dot git NTFS stream", in: ".git::$INDEX_ALLOCATION/config", reason: ".git is git's own directory"},
		{name: "dot git NTFS short name", in: "GIT~1/config", reason: ".git is git's own directory"},
		{name: "dot git NTFS alias in pattern", in: "src/.Git. /**", reason: ".git is git's own directory"},
		{name: "dot git in pattern", in: ".git/**", reason: ".git is git's own directory"},
		{name: "dot git in brace alternative", in: "{.git,src}/**", reason: ".git is git's own directory"},
		{name: "dotdot after wildcard", in: "src/*/../a", reason: ".. cannot follow a wildcard"},
		{name: "dotdot in brace alternative", in: "{..,src}/a", reason: "brace alternative"},
		{name: "empty brace alternative", in: "{,x}/a", reason: "brace alternative"},
		{name: "unclosed class", in: "src/[ab.py", reason: "invalid pattern", form: "src/api/**"},
		{name: "unclosed brace", in: "src/{a,b.py", reason: "invalid pattern", form: "src/api/**"},
		{name: "stray closing brace", in: "src/*}", reason: "invalid pattern"},
		{name: "slash in class", in: "src/[a/b]", reason: "character class cannot contain /"},
		{name: "too many alternatives", in: strings.Repeat("{a,b}", 11), reason: "brace alternatives"},
		{name: "path cleans to a namespaced key", in: "./a:0", reason: "reads as a namespaced or reserved key", expected: "[a]:0"},
		{name: "path cleans to a reserved key", in: "./workflow", reason: "reads as a namespaced or reserved key", expected: "[w]orkflow"},
		{name: "path cleans to an uppercase namespace", in: "x/../API:GET", reason: "reads as a namespaced or reserved key", expected: "[A]PI:GET"},
		{name: "path cleans to a drive", in: "./C:/x", reason: "reads as a Windows drive", expected: "[C]:/x"},
		{name: "path cleans to leading whitespace", in: "./ x", reason: "begins with whitespace", expected: "[ ]x"},
		{name: "not permitted", in: "foo:bar", reason: `namespace "foo" is not permitted`, form: "api, db, event", notPermitted: true},
		{name: "windows drive is not permitted", in: `c:\x`, reason: `namespace "c"`, notPermitted: true},
		{name: "not permitted by config", in: "db:migration-slot", opt: &lockkey.Options{Namespaces: []string{"api"}}, reason: "permitted namespaces (locks.namespaces): api", notPermitted: true},
		{name: "uppercase namespace", in: "API:GET /v1/users", reason: "namespace must be lowercase", expected: "api:GET /v1/users"},
		{name: "api lowercase method", in: "api:get /v1/users", reason: "method must be uppercase", expected: "api:GET /v1/users"},
		{name: "api two spaces", in: "api:GET  /v1/users", reason: "exactly one space", expected: "api:GET /v1/users"},
		{name: "api tab", in: "api:GET\t/v1/users", reason: "control character"},
		{name: "api no space", in: "api:GET/v1/users", reason: "separated by one space", expected: "api:GET /v1/users"},
		{name: "api missing slash", in: "api:GET v1/users", reason: "must start with /", expected: "api:GET /v1/users"},
		{name: "api missing path", in: "api:GET ", reason: "separated by one space", form: "api:<METHOD> <PATH>"},
		{name: "api only method", in: "api:GET", reason: "separated by one space", form: "api:<METHOD> <PATH>"},
		{name: "api empty", in: "api:", reason: "empty api key", form: "api:<METHOD> <PATH>"},
		{name: "api method digits", in: "api:G3T /x", reason: "uppercase letters", form: "api:<METHOD> <PATH>"},
		{name: "api query", in: "api:GET /v1/users?id=1", reason: "query strings", expected: "api:GET /v1/users"},
		{name: "api space in path", in: "api:GET /v1/a b", reason: "whitespace", form: "api:<METHOD> <PATH>"},
		{name: "api bad template", in: "api:GET /v1/{a,b}", reason: "path parameters", form: "{id}"},
		{name: "api bad char", in: "api:GET /v1/[x]", reason: "must not contain", form: "api:<METHOD> <PATH>"},
		{name: "db uppercase table", in: "db:schema:Users", reason: "table must be lowercase", expected: "db:schema:users"},
		{name: "db bad table", in: "db:schema:user-accounts", reason: "table must be lowercase", form: "db:schema:<table>"},
		{name: "db empty table", in: "db:schema:", reason: "table must be lowercase", form: "db:schema:<table>"},
		{name: "db slot spelling", in: "db:MIGRATION_SLOT", reason: "unknown db key", expected: "db:migration-slot"},
		{name: "db schema case", in: "db:SCHEMA:users", reason: "unknown db key", expected: "db:schema:users"},
		{name: "db other", in: "db:users", reason: "unknown db key", form: "db:migration-slot or db:schema:<table>"},
		{name: "event uppercase", in: "event:User.Created", reason: "dot-separated lowercase", expected: "event:user.created"},
		{name: "event empty segment", in: "event:user..created", reason: "dot-separated lowercase", expected: "event:user.created"},
		{name: "event slash", in: "event:user/created", reason: "dot-separated lowercase", form: "event:user.created"},
		{name: "event empty", in: "event:", reason: "dot-separated lowercase", form: "event:<channel>"},
		{name: "flag uppercase", in: "flag:Billing/*", reason: "slash-delimited lowercase", expected: "flag:billing/*"},
		{name: "flag trailing slash", in: "flag:billing/", reason: "slash-delimited lowercase", expected: "flag:billing/*"},
		{name: "flag partial wildcard", in: "flag:bill*", reason: "slash-delimited lowercase", form: "flag:billing/*"},
		{name: "env port", in: "env:8080", reason: "lockgate ports allocate", form: "env:shared-fixtures"},
		{name: "env colon port", in: "env::8080", reason: "lockgate ports allocate"},
		{name: "env host port", in: "env:localhost:5432", reason: "lockgate ports allocate"},
		{name: "env port prefix", in: "env:port:8080", reason: "lockgate ports allocate"},
		{name: "env port dash", in: "env:PORT-8080", reason: "lockgate ports allocate"},
		{name: "env port range", in: "env:8000-8010", reason: "lockgate ports allocate"},
		{name: "env ports word", in: "env:ports", reason: "lockgate ports allocate"},
		{name: "env bad char", in: "env:shared fixtures", reason: "[A-Za-z0-9._/-]+", form: "env:shared-fixtures"},
		{name: "env empty", in: "env:", reason: "empty env resource", form: "env:<resource>"},
		{name: "contract not listed", in: "contract:openapi/v3.yaml", opt: contractOpts, reason: "not listed in contracts.openapi.files", form: "openapi/v1.yaml"},
		{name: "contract none configured", in: "contract:openapi/v1.yaml", opt: &lockkey.Options{}, reason: "no contract files are configured (contracts.openapi.files)"},
		{name: "contract pattern", in: "contract:openapi/*.yaml", opt: contractOpts, reason: "not a pattern", form: "contract:<path>"},
		{name: "contract absolute", in: "contract:/openapi/v1.yaml", opt: contractOpts, reason: "absolute path", expected: "contract:openapi/v1.yaml"},
		{name: "contract escape", in: "contract:../x.yaml", reason: "escapes the repository", form: "contract:<path>"},
		{name: "contract empty", in: "contract:", reason: "empty contract path", form: "contract:<path>"},
		{name: "feature missing purpose", in: "feature:FEAT-1", reason: "missing purpose", form: "feature:<id>:<purpose>"},
		{name: "feature empty purpose", in: "feature:FEAT-1:", reason: "missing purpose (known purposes: pause", form: "feature:<id>:<purpose>"},
		{name: "feature uppercase purpose", in: "feature:FEAT-1:PAUSE", reason: "purpose must be lowercase", expected: "feature:FEAT-1:pause"},
		{name: "feature unknown purpose", in: "feature:FEAT-1:lunch", reason: `unknown purpose "lunch"`, form: "feature:FEAT-123:pause"},
		{name: "feature bad id", in: "feature:-x:pause", reason: "feature id", form: "feature:<id>:<purpose>"},
		{name: "feature purpose not configured", in: "feature:F:merge", opt: &lockkey.Options{FeaturePurposes: []string{"pause"}}, reason: "known purposes: pause", form: "feature:<id>:<purpose>"},
		{name: "task empty", in: "task:", reason: "invalid task id", form: "task:TASK-001"},
		{name: "task bad id", in: "task:a/b", reason: "invalid task id", form: "task:<id>"},
		{name: "activity bad id", in: "activity:x y", reason: "invalid activity id", form: "activity:<id>"},
		{name: "hot path", in: "hot:src/api.py", reason: "basename", expected: "hot:api.py"},
		{name: "hot empty", in: "hot:", reason: "empty basename", form: "hot:<basename>"},
		{name: "hot dotdot", in: "hot:..", reason: "cannot be . or ..", form: "hot:<basename>"},
		{name: "file uppercase hash", in: "file:api.py:ABCDEF", reason: "lowercase hex", expected: "file:api.py:abcdef"},
		{name: "file bad hash", in: "file:api.py:xyz", reason: "lowercase hex", form: "file:<basename>:<hash>"},
		{name: "file missing hash", in: "file:api.py", reason: "missing hash", form: "file:<basename>:<hash>"},
		{name: "file path", in: "file:src/api.py:abc", reason: "basename", expected: "file:api.py:abc"},
		{name: "backfill no type prefix", in: "backfill:lint", reason: "task type", expected: "backfill:type:lint"},
		{name: "backfill uppercase type", in: "backfill:type:Lint", reason: "[a-z0-9_-]+", expected: "backfill:type:lint"},
		{name: "backfill empty type", in: "backfill:type:", reason: "[a-z0-9_-]+", form: "backfill:type:<type>"},
		{name: "custom namespace empty value", in: "queue:", opt: &lockkey.Options{Namespaces: []string{"queue"}}, reason: "empty value", form: "queue:<value>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, err := lockkey.Parse(tt.in, tt.opt)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.in, k)
			}
			var e *lockkey.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error %T is not *lockkey.Error", tt.in, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.reason) {
				t.Errorf("message %q does not contain %q", msg, tt.reason)
			}
			if e.Input != tt.in {
				t.Errorf("Input = %q, want %q", e.Input, tt.in)
			}
			if e.Expected != tt.expected {
				t.Errorf("Expected = %q, want %q (message %q)", e.Expected, tt.expected, msg)
			}
			if tt.expected != "" && !strings.HasSuffix(msg, ": "+tt.expected) {
				t.Errorf("message %q does not end with the expected key %q", msg, tt.expected)
			}
			if tt.form != "" && !strings.Contains(msg, tt.form) {
				t.Errorf("message %q does not show the expected form %q", msg, tt.form)
			}
			if e.NotPermitted != tt.notPermitted {
				t.Errorf("NotPermitted = %v, want %v", e.NotPermitted, tt.notPermitted)
			}
			if reason, form, ok := strings.Cut(e.Reason, "; expected "); ok {
				if same := sharedPhrase(reason, form); same != "" {
					t.Errorf("message %q says %q in its reason and again in the expected form", msg, same)
				}
			}
			if e.Expected != "" {
				// A suggestion is itself a valid, canonical key.
				if c, err := lockkey.Canonical(e.Expected, tt.opt); err != nil || c != e.Expected {
					t.Errorf("suggestion %q is not canonical: %q, %v", e.Expected, c, err)
				}
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := lockkey.Parse("api:get /v1/users", nil)
	want := `invalid lock key "api:get /v1/users": method must be uppercase: api:GET /v1/users`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	_, err = lockkey.Parse("foo:bar", &lockkey.Options{Namespaces: []string{"api", "db"}})
	want = `lock key "foo:bar" not permitted: namespace "foo" is not permitted; permitted namespaces (locks.namespaces): api, db`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  any
		want any
	}{
		{name: "TaskKey", got: lockkey.TaskKey("TASK-001"), want: "task:TASK-001"},
		{name: "ActivityKey", got: lockkey.ActivityKey("WI-001-A1"), want: "activity:WI-001-A1"},
		{name: "PauseKey", got: lockkey.PauseKey("FEAT-123"), want: "feature:FEAT-123:pause"},
		{name: "IsPause pause", got: lockkey.IsPause("feature:FEAT-123:pause"), want: true},
		{name: "IsPause other purpose", got: lockkey.IsPause("feature:FEAT-123:merge"), want: false},
		{name: "IsPause empty id", got: lockkey.IsPause("feature::pause"), want: false},
		{name: "IsPause path", got: lockkey.IsPause("docs/feature:x:pause"), want: false},
		{name: "Namespace api", got: lockkey.Namespace("api:GET /x"), want: "api"},
		{name: "Namespace db schema", got: lockkey.Namespace("db:schema:users"), want: "db"},
		{name: "Namespace path", got: lockkey.Namespace("src/a.py"), want: ""},
		{name: "Namespace reserved", got: lockkey.Namespace("workflow"), want: ""},
		{name: "Namespace uppercase", got: lockkey.Namespace("API:x"), want: ""},
		{name: "IsPattern path", got: lockkey.IsPattern("src/a.py"), want: false},
		{name: "IsPattern pattern", got: lockkey.IsPattern("src/**"), want: true},
		{name: "IsPattern braces", got: lockkey.IsPattern("{a,b}.md"), want: true},
		{name: "IsPattern flag wildcard", got: lockkey.IsPattern("flag:billing/*"), want: true},
		{name: "IsPattern flag", got: lockkey.IsPattern("flag:billing/x"), want: false},
		{name: "IsPattern api template", got: lockkey.IsPattern("api:GET /v1/users/{id}"), want: true},
		{name: "IsPattern api", got: lockkey.IsPattern("api:GET /v1/users"), want: false},
		{name: "IsPattern reserved", got: lockkey.IsPattern("claim"), want: false},
		{name: "MatchPath doublestar", got: lockkey.MatchPath("src/**/*.py", "src/a/b/c.py"), want: true},
		{name: "MatchPath directory itself", got: lockkey.MatchPath("src/**", "src"), want: true},
		{name: "MatchPath star one segment", got: lockkey.MatchPath("src/*.py", "src/a/b.py"), want: false},
		{name: "MatchPath invalid", got: lockkey.MatchPath("src/[", "src/["), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.got != tt.want {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestPauseKeyParses(t *testing.T) {
	t.Parallel()
	k, err := lockkey.Parse(lockkey.PauseKey("FEAT-1"), nil)
	if err != nil || !lockkey.IsPause(k.Canonical) || k.Kind != lockkey.KindFeature {
		t.Fatalf("PauseKey does not parse as a pause key: %+v, %v", k, err)
	}
	for _, id := range []string{"TASK-001", "wp.1"} {
		for _, key := range []string{lockkey.TaskKey(id), lockkey.ActivityKey(id)} {
			if c, err := lockkey.Canonical(key, nil); err != nil || c != key {
				t.Errorf("Canonical(%q) = %q, %v", key, c, err)
			}
		}
	}
}

// sharedPhrase returns what a refusal's reason and its expected form both
// say, "" when nothing: two words in a row, or one word that is a key
// form, a character class or a compound (db:schema:<table>, [a-z0-9_]+,
// repo-relative).
func sharedPhrase(reason, form string) string {
	words := func(s string) []string {
		f := strings.Fields(s)
		for i, w := range f {
			f[i] = strings.Trim(w, ",;()")
		}
		return f
	}
	r, f := words(reason), words(form)
	for i, w := range r {
		if strings.ContainsAny(w, "[<:-") && slices.Contains(f, w) {
			return w
		}
		if i+1 < len(r) {
			pair := w + " " + r[i+1]
			for j := 0; j+1 < len(f); j++ {
				if f[j]+" "+f[j+1] == pair {
					return pair
				}
			}
		}
	}
	return ""
}
