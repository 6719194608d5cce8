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
// marker) and a one-line message, that accepted configs validate, and
// that accepted work packages can all be handed out.
func FuzzLoadBytes(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "spec.lockgate.yaml")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(""))
	f.Add([]byte("hooks:\n  requre_lock: true\n"))
	f.Add([]byte("a: &x {<<: *x}\n"))
	f.Add([]byte("packages:\n  - {id: A, depends_on: [B], priority: 2}\n  - {id: B, depends_on: [A], locks: {ttl: 15s}}\n"))
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
					checkAcceptedPackages(t, w)
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

// checkAcceptedPackages checks what the queue relies on in an accepted
// work packages file: TTLs are not negative, ClaimOrder holds every package
// once, by priority, and dependencies name packages and form no cycle
// (every package can be done in some order).
func checkAcceptedPackages(t *testing.T, w *WorkPackages) {
	t.Helper()
	ids := map[string]bool{}
	for i := range w.Packages {
		p := &w.Packages[i]
		ids[p.ID] = true
		if p.TTL() < 0 {
			t.Fatalf("package %q: TTL() = %v", p.ID, p.TTL())
		}
	}
	order := w.ClaimOrder()
	if len(order) != len(w.Packages) {
		t.Fatalf("ClaimOrder() has %d packages, want %d", len(order), len(w.Packages))
	}
	for i := 1; i < len(order); i++ {
		if order[i-1].Priority < order[i].Priority {
			t.Fatalf("ClaimOrder(): %q (priority %d) before %q (priority %d)", order[i-1].ID, order[i-1].Priority, order[i].ID, order[i].Priority)
		}
	}
	done := map[string]bool{}
	for progress := true; progress; {
		progress = false
		for _, p := range order {
			if done[p.ID] {
				continue
			}
			ready := true
			for _, dep := range p.DependsOn {
				if !ids[dep] || dep == p.ID {
					t.Fatalf("package %q accepted with depends_on %q", p.ID, dep)
				}
				ready = ready && done[dep]
			}
			if ready {
				done[p.ID], progress = true, true
			}
		}
	}
	if len(done) != len(ids) {
		t.Fatalf("accepted packages never ready: %d of %d done", len(done), len(ids))
	}
}
