package workflow

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("a", 40)
	for in, want := range map[string]string{
		"lockgate workflow\nformat 2\n":                                       "",
		"lockgate workflow\nformat 2\nbase " + base + "\n":                    "",
		"lockgate workflow\nformat 3\n":                                       "newer than this lockgate",
		"lockgate workflow\nformat 1\n":                                       "format \"1\"",
		"lockgate workflow\nformat 2":                                         "no format line",
		"lockgate workflow\nformat 2\nbase " + base:                           "no newline",
		"lockgate workflow\nformat 2\nbase xyz\n":                             "not a base line",
		"lockgate workflow\nformat 2\nbase " + base + "\nbase " + base + "\n": "out of order",
		"":           "does not start",
		"format 2\n": "does not start",
	} {
		fm, err := parseFormat([]byte(in))
		switch {
		case want == "" && err != nil:
			t.Errorf("parseFormat(%q) = %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("parseFormat(%q) = %v, want an error naming %q", in, err, want)
		case want == "" && !bytes.Equal(fm.encode(), []byte(in)):
			t.Errorf("parseFormat(%q) encodes back as %q", in, fm.encode())
		}
	}
}

// FuzzParseFormat: no input panics, and what parses encodes back to the
// same bytes (one spelling per format).
func FuzzParseFormat(f *testing.F) {
	f.Add([]byte("lockgate workflow\nformat 2\n"))
	f.Add([]byte("lockgate workflow\nformat 2\nbase " + strings.Repeat("0", 40) + "\n"))
	f.Add([]byte("lockgate workflow\nformat 99\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, err := parseFormat(b)
		if err == nil && !bytes.Equal(fm.encode(), b) {
			t.Fatalf("parseFormat(%q) encodes back as %q", b, fm.encode())
		}
	})
}
