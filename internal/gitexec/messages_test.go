package gitexec

import (
	"context"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestCommitMessages: every message, in the order asked, a long one cut
// to max+1 bytes; a name git does not know is an error.
func TestCommitMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("a", "1\n")
	r.Commit("first\n\nbody\n\nLockgate-Worker: w")
	one := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	r.Write("a", "2\n")
	r.Commit("second " + strings.Repeat("x", 100))
	two := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	var got []string
	err := CommitMessages(ctx, r.Dir, []string{two, one}, 20, func(c CommitInfo) { got = append(got, c.SHA[:7]+":"+c.Message) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{two[:7] + ":second " + strings.Repeat("x", 14), one[:7] + ":first\n\nbody\n\nLockgate"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("CommitMessages = %q, want %q", got, want)
	}
	got = nil
	if err := CommitMessages(ctx, r.Dir, []string{one}, 1000, func(c CommitInfo) { got = append(got, c.Message) }); err != nil || len(got) != 1 || !strings.HasSuffix(got[0], "Lockgate-Worker: w\n") {
		t.Errorf("CommitMessages(one) = %q, %v", got, err)
	}
	if err := CommitMessages(ctx, r.Dir, []string{strings.Repeat("0", len(one))}, 10, func(CommitInfo) {}); err == nil {
		t.Error("CommitMessages(unknown commit): no error")
	}
}
