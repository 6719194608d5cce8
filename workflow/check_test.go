package workflow

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

func TestCheckEventCommits(t *testing.T) {
	t.Parallel()
	ev, _ := normalize(event("w", 1))
	good := "100644 " + line(t, ev)
	path := EventPath(ev.ID)
	tests := []struct {
		name  string
		files map[string]string
		want  string // in the error; "" for an event commit
	}{
		{"events", map[string]string{path: good}, ""},
		{"a file beside events", map[string]string{path: good, "README": "100644 hi"}, "more than events/"},
		{"no events", map[string]string{"a.py": "100644 x"}, "no events/"},
		{"a file in events", map[string]string{path: good, "events/README": "100644 hi"}, "events/README"},
		{"not an event", map[string]string{path: "100644 {}"}, path},
		{"events is a file", map[string]string{"events": good}, "no events/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			commitTo(t, r, "lockgate/workflow", events("w", 3))
			const pushed = "refs/heads/pushed"
			importFiles(t, r, pushed, tt.files)
			c := strings.TrimSpace(gitIn(t, r.Dir, r.Env, "", "rev-parse", pushed))
			err := CheckEventCommits(context.Background(), readCfg(r), []string{mainRef}, []string{c})
			var ne *NotEventsError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckEventCommits = %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &ne) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckEventCommits = %v, want a *NotEventsError naming %q", err, tt.want)
			}
		})
	}
}

func TestCheckEventCommitsBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", events("w", 2))
	base := strings.TrimSpace(gitIn(t, r.Dir, r.Env, "", "rev-parse", mainRef))
	commitTo(t, r, "lockgate/workflow", events("v", 2))
	out := gitIn(t, r.Dir, r.Env, "", "rev-list", mainRef, "^"+base)
	commits := strings.Fields(out)
	if len(commits) == 0 {
		t.Fatal("no new commits")
	}
	if err := CheckEventCommits(context.Background(), readCfg(r), []string{mainRef}, commits); err != nil {
		t.Fatalf("the branch's own commits: %v", err)
	}
	if err := CheckEventCommits(context.Background(), readCfg(r), nil, append(commits, base)); err != nil {
		t.Fatalf("without a base: %v", err)
	}
	if err := CheckEventCommits(context.Background(), readCfg(r), nil, []string{"--all"}); err == nil || errors.As(err, new(*NotEventsError)) {
		t.Fatalf("an option: %v, want an error that is not a NotEventsError", err)
	}
}

// commitOnTop commits on ref, with git fast-import, a commit with
// message msg and ref's tip as parent (and merge as second parent when
// set) that deletes the paths of del and writes those of put (path →
// content).
func commitOnTop(t *testing.T, r *gittest.Repo, ref, msg, merge string, del []string, put map[string]string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "commit %s\ncommitter t <t@t> 1700000000 +0000\ndata %d\n%s\nfrom %s^0\n", ref, len(msg), msg, ref)
	if merge != "" {
		fmt.Fprintf(&b, "merge %s\n", merge)
	}
	for _, p := range del {
		fmt.Fprintf(&b, "D %s\n", p)
	}
	for p, content := range put {
		fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", p, len(content), content)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env = r.Dir, r.Env
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v: %s", err, out)
	}
	return strings.TrimSpace(gitIn(t, r.Dir, r.Env, "", "rev-parse", ref))
}

// TestCheckEventCommitsOnlyAdd: a commit on the branch may not change an
// event: one that writes an event file with other content under an id
// the branch has is refused, naming the file and the commit. Deleting a
// file changes nothing: the branch's events are those of its history.
func TestCheckEventCommitsOnlyAdd(t *testing.T) {
	t.Parallel()
	evs := events("w", 3)
	for i := range evs {
		evs[i], _ = normalize(evs[i])
	}
	changed := evs[1]
	changed.Action = journal.ActionRelease
	fresh, _ := normalize(event("v", 9))
	tests := []struct {
		name  string
		del   []string
		put   map[string]string
		merge bool   // a merge of the base with a commit of fresh
		want  string // in the error; "" for a commit that only adds
	}{
		{"adds", nil, map[string]string{EventPath(fresh.ID): line(t, fresh)}, false, ""},
		{"deletes", []string{EventPath(evs[1].ID)}, nil, false, ""},
		{"deletes and adds", []string{EventPath(evs[1].ID)}, map[string]string{EventPath(fresh.ID): line(t, fresh)}, false, ""},
		{"changes", nil, map[string]string{EventPath(evs[1].ID): line(t, changed)}, false, "changes " + EventPath(evs[1].ID)},
		{"merge that adds", nil, map[string]string{EventPath(fresh.ID): line(t, fresh)}, true, ""},
		{"merge that deletes", []string{EventPath(evs[0].ID)}, map[string]string{EventPath(fresh.ID): line(t, fresh)}, true, ""},
		{"merge that drops the other side", nil, nil, true, ""},
		{"a new segment with it changed", []string{EventPath(evs[0].ID), EventPath(evs[1].ID), EventPath(evs[2].ID)}, map[string]string{EventPath(evs[1].ID): line(t, changed)}, false, "changes " + EventPath(evs[1].ID)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			commitTo(t, r, "lockgate/workflow", evs)
			base := strings.TrimSpace(gitIn(t, r.Dir, r.Env, "", "rev-parse", mainRef))
			gitIn(t, r.Dir, r.Env, "", "update-ref", "refs/heads/pushed", base)
			merge := ""
			if tt.merge {
				commitTo(t, r, "side", []journal.Event{fresh})
				merge = "refs/heads/side"
			}
			c := commitOnTop(t, r, "refs/heads/pushed", "lock_acquire x by w\n\nEvent-Id: "+evs[1].ID+"\n", merge, tt.del, tt.put)
			commits := strings.Fields(gitIn(t, r.Dir, r.Env, "", "rev-list", c, "^"+base))
			err := CheckEventCommits(context.Background(), readCfg(r), []string{mainRef}, commits)
			var ne *NotEventsError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckEventCommits = %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &ne) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), c)):
				t.Fatalf("CheckEventCommits = %v, want a *NotEventsError naming %q and commit %s", err, tt.want, c)
			}
		})
	}
}
