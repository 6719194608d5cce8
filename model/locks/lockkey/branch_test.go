package lockkey

import "testing"

func TestParseBranchKeys(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"branch:main:src/a.py", "branch:main:src/a.py"},
		{"branch:release/1.2:assets/**", "branch:release/1.2:assets/**"},
		{"branch:main:./src//a.py", "branch:main:src/a.py"},
		{"branch:main:api:GET /v1/users", ""},
		{"branch:main:", ""},
		{"branch::src/a.py", ""},
		{"branch:refs/heads/main:src/a.py", ""},
		{"branch:a..b:src/a.py", ""},
		{"branch:feat{x}:src/a.py", ""},
		{"branch:x.lock:src/a.py", ""},
		{"branch:-x:src/a.py", ""},
		{"branch:main:workflow", ""},
	} {
		k, err := Parse(c.in, nil)
		if c.want == "" {
			if err == nil {
				t.Errorf("Parse(%q) = %q, want an error", c.in, k.Canonical)
			}
			continue
		}
		if err != nil || k.Canonical != c.want || k.Kind != KindBranch {
			t.Errorf("Parse(%q) = %+v, %v; want %q of kind branch", c.in, k, err, c.want)
		}
	}
	// Understood whatever namespaces a repository permits.
	if _, err := Parse("branch:main:src/a.py", &Options{Namespaces: []string{"api"}}); err != nil {
		t.Errorf("branch keys with a namespace list: %v", err)
	}
}

func TestBranchKeysOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"branch:main:src/a.py", "branch:main:src/a.py", true},
		{"branch:main:src/**", "branch:main:src/a.py", true},
		{"branch:main:SRC/A.py", "branch:main:src/a.py", true},
		{"branch:main:src/a.py", "branch:dev:src/a.py", false},
		{"branch:Main:src/a.py", "branch:main:src/a.py", false},
		{"branch:main:src/a.py", "src/a.py", false}, // the manager compares these
		{"branch:main:src/a.py", "api:GET /x", false},
	} {
		if got := Overlap(c.a, c.b); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := OverlapFoldCase(FoldCase(c.a), c.b); got != c.want {
			t.Errorf("OverlapFoldCase(FoldCase(%q), %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if FoldCase("branch:Main:SRC/A.py") != "branch:Main:src/a.py" {
		t.Errorf("FoldCase = %q", FoldCase("branch:Main:SRC/A.py"))
	}
	b, inner, ok := SplitBranch("branch:release/1:a/b:c")
	if !ok || b != "release/1" || inner != "a/b:c" {
		t.Errorf("SplitBranch = %q %q %v", b, inner, ok)
	}
}
