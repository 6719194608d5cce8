package service

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLogActionsAreTheJournals: the actions log --action takes are every
// Action constant the journal package declares, so that a new action is
// not refused as a mistyped one.
func TestLogActionsAreTheJournals(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "../model/locks/journal/journal.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if strings.HasPrefix(name.Name, "Action") && i < len(vs.Values) {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					declared = append(declared, s)
				}
			}
		}
		return true
	})
	got := slices.Sorted(slices.Values(logActions))
	slices.Sort(declared)
	if len(declared) == 0 || !slices.Equal(got, declared) {
		t.Fatalf("log's actions %v, the journal's %v", got, declared)
	}
}

// TestLogRefusesAnUnknownAction: an action no event can have is a usage
// error naming the nearest one, not an empty log.
func TestLogRefusesAnUnknownAction(t *testing.T) {
	t.Parallel()
	e := newLockFixture(t).as("me")
	for action, nearest := range map[string]string{
		"lock_acquired": "lock_acquire",
		"LOCK_RELEASE":  "lock_release",
		"unpaused":      "unpause",
	} {
		evs, err := e.Log(context.Background(), LogRequest{Action: action})
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "did you mean "+nearest+"?") {
			t.Fatalf("--action %s: %v, %v; want a usage error naming %s", action, evs, err, nearest)
		}
	}
	// Far from every action: refused, with no action suggested.
	for _, action := range []string{"bogus", "nosuch"} {
		_, err := e.Log(context.Background(), LogRequest{Action: action})
		var usage *UsageError
		if !errors.As(err, &usage) || strings.Contains(err.Error(), "did you mean") {
			t.Fatalf("--action %s: %v; want a usage error suggesting nothing", action, err)
		}
	}
	for _, action := range logActions {
		if _, err := e.Log(context.Background(), LogRequest{Action: action}); err != nil {
			t.Fatalf("--action %s: %v", action, err)
		}
	}
}
