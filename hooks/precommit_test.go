package hooks

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
)

// readLog is a lock store that logs the reads a hook makes of it.
type readLog struct {
	locks.Store
	log *[]string
	// pausesErr, when set, is InNamespace's answer.
	pausesErr error
}

func (s readLog) InNamespace(ctx context.Context, ns string) ([]locks.Entry, error) {
	*s.log = append(*s.log, "pauses")
	if s.pausesErr != nil {
		return nil, s.pausesErr
	}
	return s.Store.InNamespace(ctx, ns)
}

func (s readLog) Covering(ctx context.Context, paths []string) ([]locks.Entry, error) {
	*s.log = append(*s.log, "covering")
	return s.Store.Covering(ctx, paths)
}

// TestPreCommitReadsPausesWhileGitLists: pre-commit reads the pause
// records before it waits for git's listing of the staged change (they do
// not depend on it), and judges them as before: a pause refuses, and a
// store whose pauses cannot be read is an error, or with WarnUnavailable a
// warning and no lock check.
func TestPreCommitReadsPausesWhileGitLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("a.go", "0\n")
	r.Commit("init")
	s, err := filestore.Open(filepath.Join(t.TempDir(), "locks"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	alice := locks.Owner{Holder: "alice", HolderType: "human", Session: "alice"}
	m := &locks.Manager{Store: s, Now: func() time.Time { return now }}
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"feature:billing:pause"}, Owner: alice, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	unreadable := errors.New("pauses unreadable")
	for _, tc := range []struct {
		name      string
		pausesErr error
		warn      bool
		wantLog   []string
		wantErr   error
		wantRules []string
	}{
		{name: "a pause refuses", wantLog: []string{"pauses", "staged", "covering"}, wantRules: []string{RulePaused}},
		{name: "unreadable pauses are an error", pausesErr: unreadable, wantLog: []string{"pauses", "staged"}, wantErr: unreadable},
		{name: "or a warning, and no lock check", pausesErr: unreadable, warn: true, wantLog: []string{"pauses", "staged"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []string
			h := &Runner{GitDir: filepath.Join(r.Dir, ".git"), Dir: r.Dir,
				Checker: &Checker{Me: bobW, Now: now, Store: readLog{Store: s, log: &log, pausesErr: tc.pausesErr}, WarnUnavailable: tc.warn},
				Staged: func() ([]byte, error) {
					log = append(log, "staged")
					return []byte("M\x00a.go\x00"), nil
				}}
			rep, err := h.PreCommit(ctx)
			if !slices.Equal(log, tc.wantLog) {
				t.Errorf("reads %q, want %q", log, tc.wantLog)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			var rules []string
			for _, v := range rep.Violations {
				rules = append(rules, v.Rule)
			}
			if !slices.Equal(rules, tc.wantRules) || (tc.warn && len(rep.Warnings) != 1) {
				t.Fatalf("violations %q, warnings %q; want %q", rules, rep.Warnings, tc.wantRules)
			}
		})
	}
}
