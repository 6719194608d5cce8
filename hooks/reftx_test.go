package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	shaA = "1111111111111111111111111111111111111111"
	shaB = "2222222222222222222222222222222222222222"
	shaC = "3333333333333333333333333333333333333333"
	zero = "0000000000000000000000000000000000000000"
)

func TestReadRefTransaction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		args     []string
		in       string
		branches []RefUpdate
		known    []string
		bad      string
	}{
		{name: "a commit on a branch", args: []string{"prepared"},
			in:       shaA + " " + shaB + " HEAD\n" + shaA + " " + shaB + " refs/heads/main\n",
			branches: []RefUpdate{{shaA, shaB, "refs/heads/main"}}},
		{name: "a fetch is known work", args: []string{"prepared"},
			in:    shaA + " " + shaB + " refs/remotes/origin/main\n" + zero + " " + shaC + " refs/tags/v1\n",
			known: []string{shaB, shaC}},
		{name: "deletions and no-ops add nothing", args: []string{"prepared"},
			in: shaA + " " + zero + " refs/heads/gone\n" + shaA + " " + shaA + " refs/heads/same\n"},
		{name: "other refs are not judged", args: []string{"prepared"},
			in: zero + " " + shaA + " CHERRY_PICK_HEAD\n" + zero + " " + shaA + " refs/stash\n"},
		{name: "committed reads nothing", args: []string{"committed"}, in: "garbage"},
		{name: "aborted reads nothing", args: []string{"aborted"}, in: "garbage"},
		{name: "blank lines are skipped", args: []string{"prepared"}, in: "\n\n"},
		{name: "a short object name", args: []string{"prepared"}, in: "0000 1111 refs/heads/main\n", bad: "malformed line"},
		{name: "a missing field", args: []string{"prepared"}, in: shaA + " " + shaB + "\n", bad: "malformed line"},
		{name: "an option as an object name", args: []string{"prepared"}, in: "--all " + shaB + " refs/heads/main\n", bad: "malformed line"},
		{name: "an unknown state", args: []string{"begun"}, bad: "unknown state"},
		{name: "no state", bad: "want the transaction's state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tx, err := ReadRefTransaction(tc.args, strings.NewReader(tc.in))
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err = %v, want %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equalUpdates(tx.Branches, tc.branches) || strings.Join(tx.Known, ",") != strings.Join(tc.known, ",") {
				t.Fatalf("got %+v, want branches %+v known %v", tx, tc.branches, tc.known)
			}
			if tx.Empty() != (len(tc.branches) == 0) {
				t.Fatalf("Empty() = %v", tx.Empty())
			}
		})
	}
}

func equalUpdates(a, b []RefUpdate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// passRepo is a git directory with refs/heads/main at shaA, HEAD on it.
func passRepo(t *testing.T) (gitDir string, h *Runner) {
	t.Helper()
	gitDir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(gitDir, "refs", "heads"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"HEAD": "ref: refs/heads/main\n", "refs/heads/main": shaA + "\n"} {
		if err := os.WriteFile(filepath.Join(gitDir, filepath.FromSlash(name)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return gitDir, &Runner{GitDir: gitDir, CommonDir: gitDir, Checker: &Checker{}}
}

func TestTakePass(t *testing.T) {
	t.Parallel()
	commit := &RefTransaction{Branches: []RefUpdate{{shaA, shaB, "refs/heads/main"}}}
	t.Run("once, for the update it vouches for", func(t *testing.T) {
		t.Parallel()
		gitDir, h := passRepo(t)
		h.RecordPass(true)
		if !TakePass(gitDir, time.Now(), commit) {
			t.Fatal("a fresh record for this update was not taken")
		}
		if TakePass(gitDir, time.Now(), commit) {
			t.Fatal("the record vouched twice")
		}
	})
	for _, tc := range []struct {
		name  string
		tx    *RefTransaction
		now   time.Duration
		prep  func(t *testing.T, gitDir string)
		kept  bool // the record is still there afterwards
		taken bool
	}{
		{name: "another branch", tx: &RefTransaction{Branches: []RefUpdate{{shaA, shaB, "refs/heads/other"}}}},
		{name: "from another commit", tx: &RefTransaction{Branches: []RefUpdate{{shaC, shaB, "refs/heads/main"}}}},
		{name: "two branches at once", tx: &RefTransaction{Branches: []RefUpdate{{shaA, shaB, "refs/heads/main"}, {shaA, shaB, "refs/heads/x"}}}, kept: true},
		{name: "too late", tx: commit, now: passMaxAge + time.Second},
		{name: "from the future", tx: commit, now: -time.Minute},
		{name: "a torn record", tx: commit, prep: func(t *testing.T, gitDir string) {
			data, err := os.ReadFile(passRecordFile(gitDir))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(passRecordFile(gitDir), data[:len(data)-5], 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a changed record", tx: commit, prep: func(t *testing.T, gitDir string) {
			data, err := os.ReadFile(passRecordFile(gitDir))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(passRecordFile(gitDir), []byte(strings.Replace(string(data), shaA, shaC, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gitDir, h := passRepo(t)
			h.RecordPass(true)
			if tc.prep != nil {
				tc.prep(t, gitDir)
			}
			if got := TakePass(gitDir, time.Now().Add(tc.now), tc.tx); got != tc.taken {
				t.Fatalf("TakePass = %v, want %v", got, tc.taken)
			}
			if _, err := os.Stat(passRecordFile(gitDir)); (err == nil) != tc.kept {
				t.Fatalf("record kept = %v, want %v", err == nil, tc.kept)
			}
		})
	}
	t.Run("a refused commit leaves none", func(t *testing.T) {
		t.Parallel()
		gitDir, h := passRepo(t)
		h.RecordPass(true)
		h.RecordPass(false)
		if TakePass(gitDir, time.Now(), commit) {
			t.Fatal("a record survived a refusal")
		}
	})
	t.Run("an unborn branch", func(t *testing.T) {
		t.Parallel()
		gitDir, h := passRepo(t)
		if err := os.Remove(filepath.Join(gitDir, "refs", "heads", "main")); err != nil {
			t.Fatal(err)
		}
		h.RecordPass(true)
		if !TakePass(gitDir, time.Now(), &RefTransaction{Branches: []RefUpdate{{zero, shaB, "refs/heads/main"}}}) {
			t.Fatal("the first commit's record was not taken")
		}
	})
}

func FuzzReadRefTransaction(f *testing.F) {
	f.Add("prepared", shaA+" "+shaB+" refs/heads/main\n")
	f.Add("prepared", zero+" "+shaC+" refs/remotes/origin/x\n"+shaA+" "+zero+" refs/heads/y\n")
	f.Add("committed", "x")
	f.Add("prepared", "0 1 2\n")
	f.Fuzz(func(t *testing.T, state, in string) {
		tx, err := ReadRefTransaction([]string{state}, strings.NewReader(in))
		if err != nil {
			return
		}
		for _, u := range tx.Branches {
			if !objectName(u.Old) || !objectName(u.New) || zeroSHA(u.New) || !strings.HasPrefix(u.Ref, "refs/heads/") {
				t.Fatalf("judged a line that is not a branch update adding commits: %+v", u)
			}
		}
		for _, k := range tx.Known {
			if !objectName(k) {
				t.Fatalf("known %q is not an object name", k)
			}
		}
	})
}
