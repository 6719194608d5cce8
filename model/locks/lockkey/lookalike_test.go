package lockkey

import (
	"maps"
	"slices"
	"testing"
)

func TestLookAlikes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys []string
		want []string
	}{
		{"NFC and NFD", []string{"src/caf\u00e9.go", "src/cafe\u0301.go", "src/cafe.go"}, []string{"src/caf\u00e9.go", "src/cafe\u0301.go"}},
		{"Kelvin sign", []string{"src/K.go", "src/\u212a.go", "src/k.go"}, []string{"src/K.go", "src/\u212a.go"}},
		{"Angstrom sign", []string{"\u00c5.md", "\u212b.md", "A\u030a.md"}, []string{"A\u030a.md", "\u00c5.md", "\u212b.md"}},
		{"Cyrillic", []string{"src/api.go", "src/\u0430pi.go"}, []string{"src/api.go", "src/\u0430pi.go"}},
		{"fullwidth and ligature", []string{"ﬁle.go", "file.go", "ｆile.go"}, []string{"file.go", "ﬁle.go", "ｆile.go"}},
		{"two marks", []string{"\u01d6.txt", "u\u0308\u0304.txt"}, []string{"u\u0308\u0304.txt", "\u01d6.txt"}},
		{"case is seen", []string{"src/A.go", "src/a.go"}, nil},
		{"accent is seen", []string{"caf\u00e9", "cafe"}, nil},
		{"one key twice", []string{"src/\u212a.go", "src/\u212a.go"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(LookAlikes(tc.keys)))
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Fatalf("LookAlikes(%q) = %q, want %q", tc.keys, got, want)
			}
		})
	}
}

func TestEscaped(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"src/a.go":          "src/a.go",
		"src/\u212a.go":     `src/\u212a.go`,
		"src/caf\u00e9.go":  `src/caf\u00e9.go`,
		"src/cafe\u0301.go": `src/cafe\u0301.go`,
		`a\u212a`:           `a\\u212a`,
		"\U0001F600":        `\U0001f600`,
		"a\x1bb":            `a\x1bb`,
		"bad\xff":           `bad\xff`,
	} {
		if got := Escaped(in); got != want {
			t.Errorf("Escaped(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzEscaped checks that Escaped writes ASCII, tells distinct keys apart,
// and that LookAlikes marks two keys only when they differ.
func FuzzEscaped(f *testing.F) {
	f.Add("src/caf\u00e9.go", "src/cafe\u0301.go")
	f.Add("src/K.go", "src/\u212a.go")
	f.Add(`a\u00e9`, "a\u00e9")
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := Escaped(a), Escaped(b)
		for i := 0; i < len(ea); i++ {
			if ea[i] >= 0x80 {
				t.Fatalf("Escaped(%q) = %q: not ASCII", a, ea)
			}
		}
		if (a == b) != (ea == eb) {
			t.Fatalf("Escaped(%q) = %q, Escaped(%q) = %q", a, ea, b, eb)
		}
		if m := LookAlikes([]string{a, b}); a == b && len(m) > 0 {
			t.Fatalf("LookAlikes(%q, %q) = %v: one key", a, b, m)
		}
	})
}
