package lockkey_test

import (
	"testing"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

var benchKeys = []string{
	"./src//api/../api/users.py",
	"src/api/**",
	"api:GET /v1/users/{id}",
	"db:schema:users",
	"feature:FEAT-123:pause",
	"{src,docs}/**/*.md",
}

func BenchmarkCanonical(b *testing.B) {
	for b.Loop() {
		for _, k := range benchKeys {
			if _, err := lockkey.Canonical(k, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

var benchPairs = [][2]string{
	{"src/api/users.py", "src/api/routes.py"},
	{"src/api/**", "src/api/users.py"},
	{"src/**/*.py", "{src,docs}/**/*.md"},
	{"a/*/c/**/d", "a/b/*/e/**"},
	{"flag:billing/*", "flag:billing/x"},
	{"api:GET /v1/users/{id}", "api:GET /v1/users/42"},
}

func BenchmarkOverlap(b *testing.B) {
	for b.Loop() {
		for _, p := range benchPairs {
			lockkey.Overlap(p[0], p[1])
		}
	}
}

// foldKeys are the paths a pre-commit hook folds, one lookup each: mostly
// ASCII (the fast path), some with accents.
var foldKeys = []string{
	"src/api/users.py",
	"src/API/Users.py",
	"docs/README.md",
	"internal/gitexec/diff.go",
	"docs/Été.md",
	"src/ça/naïve.go",
}

func BenchmarkFoldCase(b *testing.B) {
	for b.Loop() {
		for _, k := range foldKeys {
			lockkey.FoldCase(k)
		}
	}
}

func BenchmarkFoldCaseASCII(b *testing.B) {
	for b.Loop() {
		for _, k := range foldKeys[:4] {
			lockkey.FoldCase(k)
		}
	}
}
