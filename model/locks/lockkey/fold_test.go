package lockkey

import "testing"

func TestFoldCase(t *testing.T) {
	cases := []struct{ in, want string }{
		{"src/README.md", "src/readme.md"},
		{"SRC/**", "src/**"},
		{"docs/Ä.md", "docs/ä.md"}, // as file systems fold, not only A-Z
		{"src/[A-Z]*.go", "src/[a-z]*.go"},
		{"task:ABC", "task:ABC"}, // logical keys keep their case
		{"api:GET /v1/Users", "api:GET /v1/Users"},
		{"workflow", "workflow"},
		{"Workflow", "/workflow"}, // a file, not the reserved key
		{"CLAIM", "/claim"},
		{"Foo:bar", "/foo:bar"}, // a file, not a foo: key
		{"Foo:*", "/foo:*"},
		{"/foo:bar", "/foo:bar"},
	}
	for _, c := range cases {
		if got := FoldCase(c.in); got != c.want {
			t.Errorf("FoldCase(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := FoldCase(FoldCase(c.in)); got != c.want {
			t.Errorf("FoldCase(FoldCase(%q)) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSameFoldCase(t *testing.T) {
	same := [][2]string{{"src/README.md", "src/Readme.md"}, {"SRC/A.GO", "src/a.go"}, {"SRC/**", "src/**"}, {"Workflow", "WORKFLOW"}, {"docs/Ä.md", "docs/ä.md"}}
	for _, p := range same {
		if !SameFoldCase(p[0], p[1]) {
			t.Errorf("SameFoldCase(%q, %q) = false", p[0], p[1])
		}
	}
	differ := [][2]string{{"task:ABC", "task:abc"}, {"Workflow", "workflow"}, {"Foo:bar", "foo:bar"}, {"Claim", "claim"}}
	for _, p := range differ {
		if SameFoldCase(p[0], p[1]) {
			t.Errorf("SameFoldCase(%q, %q) = true", p[0], p[1])
		}
	}
}

func TestOverlapFoldCase(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"SRC/**", "src/a.go", true},
		{"SRC/A.GO", "src/a.go", true},
		{"src/[A-C]*.go", "src/b.go", true},
		{"src/Readme.md", "src/README.md", true},
		{"src/**", "lib/A.go", false},
		{"src/a.go", "src/b.go", false},
		{"task:ABC", "task:abc", false},
		{"api:GET /v1/**", "api:GET /v1/users", true},
		{"Workflow", "workflow", false},
		{"Workflow", "[w]orkflow", true},
		{"/workflow", "[W]ORKFLOW", true},
		{"Api:*", "api:GET /x", false},
		{"Api:*", "/api:x", true},
	}
	for _, c := range cases {
		if got := OverlapFoldCase(c.a, c.b); got != c.want {
			t.Errorf("OverlapFoldCase(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := OverlapFoldCase(c.b, c.a); got != c.want {
			t.Errorf("OverlapFoldCase(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
