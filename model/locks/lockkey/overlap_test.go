package lockkey_test

import (
	"testing"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

func TestOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		// Equal keys, paths.
		{name: "equal path", a: "src/a.py", b: "src/a.py", want: true},
		{name: "different paths", a: "src/a.py", b: "src/b.py", want: false},
		{name: "directory path and file below", a: "src", b: "src/a.py", want: false},
		{name: "equal pattern", a: "src/**", b: "src/**", want: true},
		// Path against pattern.
		{name: "doublestar covers file", a: "src/api/**", b: "src/api/users.py", want: true},
		{name: "doublestar covers its directory", a: "src/api/**", b: "src/api", want: true},
		{name: "doublestar other dir", a: "src/api/**", b: "src/web/a.py", want: false},
		{name: "star one level", a: "src/*.py", b: "src/a.py", want: true},
		{name: "star not deeper", a: "src/*.py", b: "src/x/a.py", want: false},
		{name: "braces", a: "{src,docs}/*.md", b: "docs/a.md", want: true},
		{name: "class", a: "src/[ab].py", b: "src/c.py", want: false},
		{name: "leading doublestar", a: "**/users.py", b: "src/api/users.py", want: true},
		{name: "leading doublestar zero dirs", a: "**/users.py", b: "users.py", want: true},
		// Pattern against pattern.
		{name: "doublestar vs star in subdir", a: "src/**", b: "src/api/*.py", want: true},
		{name: "different dirs", a: "src/*.py", b: "docs/*.md", want: false},
		{name: "same dir different extensions", a: "src/*.py", b: "src/*.md", want: false},
		{name: "same dir compatible", a: "src/*.py", b: "src/a*", want: true},
		{name: "prefixes differ", a: "src/a*.py", b: "src/b*.py", want: false},
		{name: "segment counts differ", a: "a/*/c", b: "a/*", want: false},
		{name: "star vs literal mismatch", a: "a/*/c", b: "a/b/d", want: false},
		{name: "star vs literal match", a: "a/*/c", b: "a/b/c", want: true},
		{name: "star segment vs star segment", a: "a/*/c", b: "a/b/*", want: true},
		{name: "doublestar middle", a: "a/**/z", b: "a/b/c/*", want: true},
		{name: "doublestar middle literal prefix differs", a: "a/**/z", b: "b/**", want: false},
		{name: "doublestar both", a: "**/*.py", b: "src/**", want: true},
		{name: "doublestar suffix mismatch", a: "**/*.py", b: "**/*.md", want: false},
		{name: "doublestar vs deeper pattern", a: "docs/**", b: "docs/a/b/*.md", want: true},
		{name: "doublestar directory vs pattern", a: "src/**", b: "[s]rc", want: true},
		{name: "braces with slash", a: "{src/api,docs}/*.py", b: "src/api/*.py", want: true},
		{name: "braces disjoint", a: "{src,docs}/*.py", b: "lib/*.py", want: false},
		{name: "classes both sides assumed overlapping", a: "src/[ab]*.py", b: "src/[bc]*.py", want: true},
		{name: "negated class falls back to prefixes", a: "src/[!_]*.py", b: "src/x/*.py", want: true},
		{name: "negated class with other prefix", a: "src/[!_]*.py", b: "docs/*.md", want: false},
		{name: "everything", a: "**", b: "x/y/*.z", want: true},
		// Logical keys.
		{name: "flag wildcard vs flag", a: "flag:billing/*", b: "flag:billing/x", want: true},
		{name: "flag wildcard vs other flag", a: "flag:billing/*", b: "flag:search/x", want: false},
		{name: "flag wildcard one level", a: "flag:billing/*", b: "flag:billing/x/y", want: false},
		{name: "flag doublestar", a: "flag:billing/**", b: "flag:billing/x/y", want: true},
		{name: "flag wildcards", a: "flag:billing/*", b: "flag:*/x", want: true},
		{name: "flags differ", a: "flag:billing/a", b: "flag:billing/b", want: false},
		{name: "api equal", a: "api:GET /v1/users", b: "api:GET /v1/users", want: true},
		{name: "api method differs", a: "api:GET /v1/users", b: "api:POST /v1/users", want: false},
		{name: "api template vs concrete", a: "api:GET /v1/users/{id}", b: "api:GET /v1/users/42", want: true},
		{name: "api templates", a: "api:GET /v1/users/{id}", b: "api:GET /v1/users/{userId}", want: true},
		{name: "api template method differs", a: "api:GET /v1/users/{id}", b: "api:PUT /v1/users/42", want: false},
		{name: "db", a: "db:schema:users", b: "db:schema:orders", want: false},
		{name: "task vs activity same id", a: "task:X-1", b: "activity:X-1", want: false},
		{name: "hot bracket basename", a: "hot:[id].tsx", b: "hot:i.tsx", want: true},
		// Across kinds.
		{name: "path vs namespaced", a: "contract:openapi/v1.yaml", b: "openapi/v1.yaml", want: false},
		{name: "pattern vs namespaced", a: "**", b: "api:GET /x", want: false},
		{name: "pattern vs reserved", a: "**", b: "workflow", want: false},
		{name: "reserved vs itself", a: "claim", b: "claim", want: true},
		{name: "reserved vs other", a: "claim", b: "workflow", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := lockkey.Overlap(tt.a, tt.b); got != tt.want {
				t.Errorf("Overlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := lockkey.Overlap(tt.b, tt.a); got != tt.want {
				t.Errorf("Overlap(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

// TestOverlapNonCanonical checks that keys that are not canonical are
// handled conservatively and without panicking.
func TestOverlapNonCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{name: "invalid pattern vs pattern", a: "src/[", b: "docs/*", want: true},
		{name: "invalid pattern vs path", a: "src/{a", b: "docs/x", want: true},
		{name: "escape falls back to prefixes", a: `a\*/b*`, b: "c/*", want: false},
		{name: "unbalanced flag", a: "flag:[", b: "flag:x", want: true},
		{name: "empty", a: "", b: "*", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := lockkey.Overlap(tt.a, tt.b); got != tt.want {
				t.Errorf("Overlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := lockkey.Overlap(tt.b, tt.a); got != tt.want {
				t.Errorf("Overlap(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
			}
		})
	}
}
