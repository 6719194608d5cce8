package lockkey

import "testing"

func TestRelArg(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, key, dir, want string }{
		{"top", "src/a.go", "", "src/a.go"},
		{"inside", "docs/a.md", "docs/", "a.md"},
		{"sibling", "src/a.go", "docs/", "../src/a.go"},
		{"deeper", "src/api/users.py", "src/web/", "../api/users.py"},
		{"below", "src/api/users.py", "src/", "api/users.py"},
		{"pattern", "src/**", "src/", "**"},
		{"pattern elsewhere", "lib/**/*.go", "docs/guide/", "../../lib/**/*.go"},
		{"file named like the dir", "docs", "docs/", "../docs"},
		{"top-level file", "README.md", "a/b/", "../../README.md"},
		{"logical key", "api:GET /v1/users", "docs/", "api:GET /v1/users"},
		{"reserved key", "workflow", "docs/", "workflow"},
		{"task key", "task:T-1", "docs/", "task:T-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := RelArg(tc.key, tc.dir); got != tc.want {
				t.Fatalf("RelArg(%q, %q) = %q, want %q", tc.key, tc.dir, got, tc.want)
			}
		})
	}
}
