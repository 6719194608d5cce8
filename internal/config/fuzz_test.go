package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadBytes checks that no input panics, that every error is a
// *Error whose problems carry a line inside the file (or the whole-file
// marker) and a one-line message, and that accepted configs validate.
func FuzzLoadBytes(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "spec.lockgate.yaml")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(""))
	f.Add([]byte("hooks:\n  requre_lock: true\n"))
	f.Add([]byte("a: &x {<<: *x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, load := range []func() error{
			func() error {
				c, err := LoadBytes(name, data)
				if err == nil {
					if c == nil {
						t.Fatal("nil config without error")
					}
					if verr := c.Validate(); verr != nil {
						t.Fatalf("accepted config fails Validate: %v", verr)
					}
					c.TTL("agent", "task")
					_ = c.ValidateKeys(func(string) error { return errors.New("no") })
				}
				return err
			},
			func() error {
				w, err := LoadWorkPackagesBytes(name, data)
				if err == nil {
					_ = w.Validate(func(string) error { return errors.New("no") }, func(string) error { return errors.New("no") })
				}
				return err
			},
		} {
			err := load()
			if err == nil {
				continue
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			if len(ce.Problems) == 0 {
				t.Fatal("*Error without problems")
			}
			if len(ce.Problems) > MaxProblems || strings.Count(ce.Error(), "\n") > ShownProblems {
				t.Fatalf("%d problems kept, %d lines of message: want at most %d and %d",
					len(ce.Problems), strings.Count(ce.Error(), "\n")+1, MaxProblems, ShownProblems+1)
			}
			// YAML also breaks lines at CR, NEL, LS and PS.
			lines := 1
			for _, sep := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
				lines += bytes.Count(data, []byte(sep))
			}
			for _, p := range ce.Problems {
				if p.Line < WholeFile || p.Line > lines {
					t.Errorf("problem %q: line %d outside 0..%d", p.Msg, p.Line, lines)
				}
				if p.File != name || p.Msg == "" || strings.ContainsAny(p.Msg, "\r\n") {
					t.Errorf("bad problem %#v", p)
				}
			}
		}
	})
}
