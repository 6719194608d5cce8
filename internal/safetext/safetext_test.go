package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestField(t *testing.T) {
	for in, want := range map[string]string{
		"alice@host":        "alice@host",
		"a\x1b[31mred":      `a\x1b[31mred`,
		"bell\a":            `bell\x07`,
		"rtl\u202eevil":     `rtl\u202eevil`,
		"zero\u200bwidth":   `zero\u200bwidth`,
		"line\u2028sep":     `line\u2028sep`,
		"two\nlines\ttab\r": `two\nlines\ttab\r`,
		"c1\u009b":          `c1\x9b`,
		"bad\xffutf8":       `bad\xffutf8`,
		"héllo wörld":       "héllo wörld",
	} {
		if got := Field(in); got != want {
			t.Errorf("Field(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Text("a\nb\tc\x1bd"); got != "a\nb\tc\\x1bd" {
		t.Errorf("Text kept or lost the wrong characters: %q", got)
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []string{"alice@host", "bob", "équipe-1"} {
		if err := Check("worker id", ok); err != nil {
			t.Errorf("Check(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"a\x1b", "a\a", "a\u202e", "a\u200b", "a\u2028", "a\n", "\xff", "a\ufeff"} {
		if err := Check("worker id", bad); err == nil {
			t.Errorf("Check(%q) accepted it", bad)
		}
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	if got := Shorten("short"); got != "short" {
		t.Fatalf("Shorten(short) = %q", got)
	}
	long := strings.Repeat("é", 300) // 600 bytes, 2 per rune
	got := Shorten(long)
	if !strings.HasSuffix(got, "… (600 bytes)") || !utf8.ValidString(got) || len(got) > 200+len("… (600 bytes)") {
		t.Fatalf("Shorten(long) = %q", got)
	}
}
