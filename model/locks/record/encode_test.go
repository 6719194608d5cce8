package record

import (
	"strings"
	"testing"
)

func TestEncodeKey(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a/", 101)
	tests := []struct {
		name, key, want string
	}{
		{"plain", "src/a.go", "src%2Fa.go"},
		{"lower kept", "abc-_.09", "abc-_.09"},
		{"upper escaped", "task:ABC", "task%3A%41%42%43"},
		{"leading dot", ".x", "%2Ex"},
		{"dot", ".", "%2E"},
		{"dotdot", "..", "%2E."},
		{"dotdot prefix", "..x", "%2E.x"},
		{"dotdot suffix", "x..", "x.."},
		{"percent", "%41", "%2541"},
		{"tilde", "~", "%7E"},
		{"space and slash", "api:GET /v1/users", "api%3A%47%45%54%20%2Fv1%2Fusers"},
		{"unicode", "docs/日本.md", "docs%2F%E6%97%A5%E6%9C%AC.md"},
		{"nul", "a\x00b", "a%00b"},
		{"long hashed", long, hashedName(long)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Stem(tc.key)
			if got != tc.want {
				t.Fatalf("Stem(%q) = %q, want %q", tc.key, got, tc.want)
			}
			back, ok := KeyOfStem(got)
			hashed := strings.HasPrefix(got, "~")
			if hashed != !ok {
				t.Fatalf("KeyOfStem(%q) ok = %v for hashed = %v", got, ok, hashed)
			}
			if ok && back != tc.key {
				t.Fatalf("KeyOfStem(%q) = %q, want %q", got, back, tc.key)
			}
		})
	}
}

func TestEncodeKeyLengthLimit(t *testing.T) {
	t.Parallel()
	for n := 190; n <= 210; n++ {
		key := strings.Repeat("x", n)
		name := Stem(key)
		if len(name) > maxNameLen+1 && len(name) != 65 {
			t.Fatalf("len %d: name of %d bytes", n, len(name))
		}
		if (n > maxNameLen) != strings.HasPrefix(name, "~") {
			t.Fatalf("len %d: hashed = %v", n, strings.HasPrefix(name, "~"))
		}
	}
	// 66 escaped bytes make 198; one more escape crosses the limit.
	if name := Stem(strings.Repeat("A", 66)); len(name) != 198 {
		t.Fatalf("66 escapes: %d bytes", len(name))
	}
	if name := Stem(strings.Repeat("A", 67)); !strings.HasPrefix(name, "~") {
		t.Fatalf("67 escapes not hashed: %q", name)
	}
}

func TestDecodeKeyRejects(t *testing.T) {
	t.Parallel()
	for _, stem := range []string{
		"", ".x", "A", "a/b", "%", "%4", "%4a", "%GG", "%61", "%2e", "%2Fa%", "a b",
		"~" + strings.Repeat("0", 64), strings.Repeat("a", maxNameLen+1), "x%2E",
	} {
		if key, ok := KeyOfStem(stem); ok {
			t.Errorf("KeyOfStem(%q) = %q, want rejection", stem, key)
		}
	}
}

// decodeFolded decodes a name that a case-insensitive file system may have
// lower-cased: if it always recovers the key, lower-casing is injective.
func decodeFolded(stem string) (string, bool) {
	return KeyOfStem(foldHex(stem))
}

// foldHex upper-cases the hex digits of escapes, which is all KeyOfStem
// needs to read a lower-cased name.
func foldHex(stem string) string {
	b := []byte(stem)
	for i := 0; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) {
			b[i+1] = upper(b[i+1])
			b[i+2] = upper(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func FuzzEncode(f *testing.F) {
	for _, k := range []string{"src/a.go", "task:ABC", "..", ".", "..x", "docs/日本.md", "%41", "~", "api:GET /v1/users"} {
		f.Add(k, strings.ToLower(k))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, key := range []string{a, b} {
			if key == "" {
				continue
			}
			name := Stem(key)
			if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
				t.Fatalf("Stem(%q) = %q: not a safe file name", key, name)
			}
			if len(name) > maxNameLen && len(name) != 65 {
				t.Fatalf("Stem(%q) has %d bytes", key, len(name))
			}
			for i := 0; i < len(name); i++ {
				c := name[i]
				if !rawByte(c) && c != '%' && !('A' <= c && c <= 'F') && (c != '~' || i > 0) {
					t.Fatalf("Stem(%q) = %q has byte %q", key, name, c)
				}
			}
			if name[0] == '~' {
				if name != hashedName(key) {
					t.Fatalf("Stem(%q) = %q: bad hashed name", key, name)
				}
				continue
			}
			if got, ok := KeyOfStem(name); !ok || got != key {
				t.Fatalf("KeyOfStem(Stem(%q)) = %q, %v", key, got, ok)
			}
			if got, ok := decodeFolded(strings.ToLower(name)); !ok || got != key {
				t.Fatalf("lower-cased %q decodes to %q, %v: not injective under case folding", name, got, ok)
			}
		}
		if a != "" && b != "" && a != b && strings.EqualFold(Stem(a), Stem(b)) {
			t.Fatalf("keys %q and %q have names equal but for case: %q, %q", a, b, Stem(a), Stem(b))
		}
		// Any name KeyOfStem accepts is the name of the key it decodes to.
		if key, ok := KeyOfStem(a); ok && Stem(key) != a {
			t.Fatalf("KeyOfStem(%q) = %q, which encodes to %q", a, key, Stem(key))
		}
	})
}

// A record name is its key's, or another spelling of it (another
// directory, other letter case), or no key's; the fast path for plain path
// names agrees with the full reading.
func TestMisplaced(t *testing.T) {
	for _, c := range []struct {
		name, key string
		misplaced bool
	}{
		{"src%2Ff5.go.lock", "", false},
		{"keys/task%3A%541.lock", "", false},
		{"patterns/src%2F%2A%2A.lock", "", false},
		{"keys/src%2Ff5.go.lock", "src/f5.go", true},
		{"patterns/src%2Ff5.go.lock", "src/f5.go", true},
		{"SRC%2FF5.go.lock", "src/f5.go", true},
		{"src%2ff5.go.lock", "src/f5.go", true},
		{"%53rc.lock", "src", true},
		{"src%2F%2A.lock", "src/*", true},
		{"task%3A%541.lock", "task:T1", true},
		{"workflow.lock", "workflow", true},
		{"%ZZ.lock", "", false},
		{"a b.lock", "", false},
		{"~" + strings.Repeat("ab", 32) + ".lock", "", false},
	} {
		key, misplaced := Misplaced(c.name)
		if key != c.key || misplaced != c.misplaced {
			t.Errorf("Misplaced(%q) = %q, %v; want %q, %v", c.name, key, misplaced, c.key, c.misplaced)
		}
	}
	for _, key := range []string{"src/a.go", "a-b_c.d/e", "x/", "/workflow", "Src/A.go"} {
		if k, m := Misplaced(Name(key)); m {
			t.Errorf("Misplaced(Name(%q)) = %q, true", key, k)
		}
	}
}
