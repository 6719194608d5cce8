package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/scope"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/session"
)

// profilePolicy defines one scope profile, backfill.
const profilePolicy = "version: 1\nworkflow: {auto_commit: false}\nscope:\n  profiles:\n    backfill: {allow: [tests/**]}\n"

func TestNoteRejections(t *testing.T) {
	ctx := context.Background()
	report := func(vs ...hooks.Violation) *hooks.Report { return &hooks.Report{Violations: vs} }
	tests := []struct {
		name     string
		open     bool
		cycle    int // a plan of that cycle first (0 none)
		taskType string
		report   *hooks.Report
		want     []string
		// wantKeys are the cooldown records in the store after.
		wantKeys []string
	}{
		{name: "no store opened, nothing to note", report: report(hooks.Violation{Path: "a.go", Rule: scope.RuleProfile})},
		{name: "no refusals of scope", open: true, report: report(hooks.Violation{Path: "a.go", Rule: "locked"})},
		{name: "profile and core refusals, each once", open: true, cycle: 3, taskType: "lint",
			report: report(hooks.Violation{Path: "b.go", Rule: scope.RuleCore}, hooks.Violation{Path: "a.go", Rule: scope.RuleProfile},
				hooks.Violation{Path: "a.go", Rule: scope.RuleProfile}, hooks.Violation{Rule: scope.RuleProfile}),
			want:     []string{"a.go (lint backfills)", "b.go (lint backfills)"},
			wantKeys: []string{"cooldown:lint:a.go", "cooldown:lint:b.go"}},
		{name: "a change of no known type", open: true, report: report(hooks.Violation{Path: "a.go", Rule: scope.RuleProfile}),
			want: []string{"a.go (backfills of any type)"}, wantKeys: []string{"cooldown::a.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, map[string]string{".lockgate.yaml": profilePolicy, "tasks.yaml": "tasks: []\n"})
			e := loadAs(t, r.Dir, "alice", nil)
			if tt.open {
				e = openAs(t, r.Dir, "alice", nil)
			}
			if tt.cycle > 0 {
				if _, err := e.Plan(ctx, service.PlanRequest{File: r.Dir + "/tasks.yaml", Cycle: tt.cycle}); err != nil {
					t.Fatal(err)
				}
			}
			cycle, got, err := e.NoteRejections(ctx, tt.taskType, tt.report)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) || len(tt.want) > 0 && cycle != tt.cycle {
				t.Fatalf("noted %q in cycle %d, want %q in %d", got, cycle, tt.want, tt.cycle)
			}
			if !tt.open {
				return
			}
			list, err := e.Locks().List(ctx, lockops.ListRequest{All: true})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, l := range list.Live() {
				if strings.HasPrefix(l.Key, session.CooldownNS+":") {
					keys = append(keys, l.Key)
					if l.Reason != fmt.Sprintf("cycle %d", tt.cycle) {
						t.Errorf("%s: %q, want cycle %d", l.Key, l.Reason, tt.cycle)
					}
				}
			}
			if !slices.Equal(keys, tt.wantKeys) {
				t.Fatalf("cooldown records %q, want %q", keys, tt.wantKeys)
			}
		})
	}
}

func TestAllEvents(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// setup writes the clone's events, the clock ticking a second a
		// reading; it returns since.
		setup func(t *testing.T, r *gittest.Repo, e *service.Workspace) time.Time
		// wantKeys are the acquisitions' keys, by time; wantWarning a part
		// of a warning said.
		wantKeys    []string
		wantWarning string
	}{
		{name: "the journal",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) time.Time {
				takeKeys(t, e, "api:GET /a", "api:GET /b")
				return time.Time{}
			},
			wantKeys: []string{"api:GET /a", "api:GET /b"}},
		{name: "the branch and the journal, each event once, by time",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) time.Time {
				takeKeys(t, e, "api:GET /a")
				syncBranch(t, e)
				takeKeys(t, e, "api:GET /b")
				return time.Time{}
			},
			wantKeys: []string{"api:GET /a", "api:GET /b"}},
		{name: "since a time",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) time.Time {
				takeKeys(t, e, "api:GET /a")
				syncBranch(t, e)
				since := e.Now()
				takeKeys(t, e, "api:GET /b")
				return since
			},
			wantKeys: []string{"api:GET /b"}},
		{name: "lines that are not events are skipped, with a warning",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) time.Time {
				takeKeys(t, e, "api:GET /a")
				appendTo(t, e.JournalFile().Path(), "not json\n")
				takeKeys(t, e, "api:GET /b")
				return time.Time{}
			},
			wantKeys: []string{"api:GET /a", "api:GET /b"}, wantWarning: "is not an event; skipped"},
		{name: "a branch that cannot be read: the journal, with a warning",
			setup: func(t *testing.T, r *gittest.Repo, e *service.Workspace) time.Time {
				takeKeys(t, e, "api:GET /a")
				// A branch whose tip is no commit.
				blob := strings.TrimSpace(r.Git("hash-object", "-w", "README.md"))
				r.Write(".git/refs/heads/lockgate/workflow", blob+"\n") // git's update-ref refuses it
				return time.Time{}
			},
			wantKeys: []string{"api:GET /a"}, wantWarning: "workflow branch not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, map[string]string{".lockgate.yaml": logPolicy})
			var said notes
			e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "alice", Getenv: envOf(),
				Clock: tickingClock(time.Second), Notify: said.Notify})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			if err := e.Open(ctx, service.Purpose{TakesLocks: true}); err != nil {
				t.Fatal(err)
			}
			since := tt.setup(t, r, e)
			evs, err := e.AllEvents(ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i, ev := range evs {
				if i > 0 && ev.Timestamp.Before(evs[i-1].Timestamp) {
					t.Fatalf("events out of time order: %v", evs)
				}
				if ev.Action == journal.ActionAcquire {
					keys = append(keys, ev.Key)
				}
			}
			if !slices.Equal(keys, tt.wantKeys) {
				t.Fatalf("acquisitions %q, want %q", keys, tt.wantKeys)
			}
			if !strings.Contains(said.String(), tt.wantWarning) {
				t.Fatalf("said %q, want %q", said.String(), tt.wantWarning)
			}
		})
	}
}
