package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"
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
