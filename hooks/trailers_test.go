package hooks

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
)

// trailerMessages are commit messages as the commit-msg hook sees them:
// from -m, from an editor (comments), from commit -v (scissors), from a
// merge, with and without a trailer block of the user's.
var trailerMessages = map[string]string{
	"subject without newline": "subject",
	"subject":                 "subject\n",
	"body":                    "subject\n\nbody text\n",
	"signed-off-by":           "subject\n\nbody\n\nSigned-off-by: A <a@example.com>\n",
	"editor comments":         "subject\n\nbody\n\nSigned-off-by: A <a@example.com>\n\n# Please enter the commit message for your changes.\n#\n# On branch main\n",
	"commit -v": "subject\n\n# Please enter the commit message\n# ------------------------ >8 ------------------------\n# Do not modify or remove the line above.\n" +
		"diff --git a/x b/x\n+Foo: bar\n",
	"mixed last paragraph":   "subject\n\nFoo: bar\nnot a trailer\nmore text\n",
	"subject like a trailer": "Key: value\n",
	"continuation":           "subject\n\nCo-authored-by: X <x@example.com>\n  continued\nTask: T-1\n",
	"git-generated quarter":  "subject\n\nbody line\nSigned-off-by: A <a@example.com>\n",
	"merge conflicts":        "Merge branch 'side'\n\n# Conflicts:\n#\ta.txt\n",
	"comment inside":         "subject\n\nbody\n# a comment\nTask: T-2\n",
	"trailing blank lines":   "subject\n\nTask: T-3\n\n\n",
	"old lockgate trailers": "subject\n\nTask: T-4\nLockgate-Worker: bob\nLockgate-Session: bob\nLockgate-Lock: a.txt fence=3\n" +
		"lockgate-lock: b b.txt fence=4\nSigned-off-by: A <a@example.com>\n",
	"only lockgate trailers": "subject\n\nLockgate-Worker: bob\nLockgate-Lock: x fence=1\n",
}

func parseWithGit(t *testing.T, msg string) []string {
	t.Helper()
	cmd := exec.Command("git", "interpret-trailers", "--parse")
	cmd.Stdin = strings.NewReader(msg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git interpret-trailers --parse: %v", err)
	}
	return splitLines(string(out))
}

// TestWithTrailersGit checks WithTrailers against git's own parser: the
// trailers git reads afterwards are the user's (lockgate's old ones gone)
// followed by exactly the new ones, and applying it again changes nothing.
func TestWithTrailersGit(t *testing.T) {
	t.Parallel()
	me := locks.Owner{Holder: "alice@test", HolderType: "human", Session: "s-1"}
	lines, err := Trailers(me, []heldLock{{Key: "a.txt", Fence: 2}, {Key: "src/my dir/**", Fence: 42}})
	if err != nil {
		t.Fatal(err)
	}
	for name, msg := range trailerMessages {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var want []string
			for _, l := range parseWithGit(t, msg) {
				if !isLockgateTrailer(l) {
					want = append(want, l)
				}
			}
			for _, l := range lines {
				want = append(want, l+"\n")
			}
			out := WithTrailers(msg, lines, "#")
			if got := parseWithGit(t, out); !slices.Equal(got, want) {
				t.Errorf("git reads the trailers of\n%s\nas %q, want %q", out, got, want)
			}
			if again := WithTrailers(out, lines, "#"); again != out {
				t.Errorf("applied twice:\n%s\nwant\n%s", again, out)
			}
			if name == "commit -v" && !strings.HasSuffix(out, msg[strings.Index(msg, "# Please"):]) {
				t.Errorf("the comments and the diff below the scissors line moved:\n%s", out)
			}
		})
	}
}

func TestWithTrailersEmptyMessage(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{"", "\n\n", "# only a comment\n", "\n# Please enter\n# ------------------------ >8 ------------------------\ndiff\n"} {
		if got := WithTrailers(msg, []string{"Lockgate-Worker: a"}, "#"); got != msg {
			t.Errorf("WithTrailers(%q) = %q: an empty message must stay empty, for git to refuse it", msg, got)
		}
	}
}

func TestTrailersBoundedAndSafe(t *testing.T) {
	t.Parallel()
	me := locks.Owner{Holder: "alice", HolderType: "human", Session: "s"}
	many := make([]heldLock, MaxTrailerLocks+1)
	for i := range many {
		many[i] = heldLock{Key: "k" + strings.Repeat("x", i), Fence: 1}
	}
	got, err := Trailers(me, many)
	if err != nil {
		t.Fatal(err)
	}
	if want := TrailerLockCount + ": 33"; got[len(got)-1] != want || len(got) != 4 {
		t.Errorf("Trailers(33 locks) = %q, want identity and %q", got, want)
	}
	for _, bad := range []string{"a\nb", "a\rb", "tab\tkey", " lead", "trail ", "\xff", "a\u2028b"} {
		if _, err := Trailers(me, []heldLock{{Key: bad, Fence: 1}}); err == nil {
			t.Errorf("Trailers(key %q): no error", bad)
		}
		if _, err := Trailers(locks.Owner{Holder: bad}, nil); err == nil {
			t.Errorf("Trailers(worker %q): no error", bad)
		}
	}
}

func TestParseTrailers(t *testing.T) {
	t.Parallel()
	msg := "s\n\nLockgate-Worker: bob\nLockgate-Session: s1\nLockgate-Lock: my key fence=x fence=7\nLockgate-Lock: bad\n"
	w, s, held := parseTrailers(msg, "#")
	if w != "bob" || s != "s1" || len(held) != 1 || held[0].Key != "my key fence=x" || held[0].Fence != 7 {
		t.Errorf("parseTrailers = %q %q %+v", w, s, held)
	}
}

// FuzzWithTrailers: whatever the message, WithTrailers does not panic,
// keeps it when it adds nothing, and a second pass changes nothing.
func FuzzWithTrailers(f *testing.F) {
	for _, m := range trailerMessages {
		f.Add(m)
	}
	lines := []string{"Lockgate-Worker: a", "Lockgate-Lock: k fence=1"}
	f.Fuzz(func(t *testing.T, msg string) {
		out := WithTrailers(msg, lines, "#")
		if out != msg && !strings.Contains(out, "Lockgate-Lock: k fence=1\n") {
			t.Fatalf("changed %q to %q without the trailers", msg, out)
		}
		if again := WithTrailers(out, lines, "#"); again != out {
			t.Fatalf("second pass over %q: %q, want %q", msg, again, out)
		}
	})
}

// TestWithTrailersCommentChar: with core.commentChar ';', '#' lines are
// text and ';' lines comments, for git and for WithTrailers alike.
func TestWithTrailersCommentChar(t *testing.T) {
	t.Parallel()
	lines := []string{"Lockgate-Worker: a"}
	for _, msg := range []string{
		"subject\n\n#123 fixed\n",
		"subject\n\nTask: T-1\n; Please enter the commit message\n;\n",
		"subject\n\n; ------------------------ >8 ------------------------\ndiff --git a/x b/x\n",
	} {
		out := WithTrailers(msg, lines, ";")
		cmd := exec.Command("git", "-c", "core.commentChar=;", "interpret-trailers", "--parse")
		cmd.Stdin = strings.NewReader(out)
		got, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(got), "Lockgate-Worker: a\n") {
			t.Errorf("git (commentChar ;) reads the trailers of\n%s\nas %q", out, got)
		}
	}
}

func TestCommitAuthor(t *testing.T) {
	t.Parallel()
	ok := "s\n\nSigned-off-by: A <a@x>\nLockgate-Worker: alice@host\nLockgate-Worker-Type: human\nLockgate-Session: alice@host\nLockgate-Lock: a.py fence=3\n"
	me, found := CommitAuthor(ok, "")
	if !found || me != (locks.Owner{Holder: "alice@host", HolderType: "human", Session: "alice@host"}) {
		t.Errorf("CommitAuthor(well-formed) = %+v, %v", me, found)
	}
	if me, found := CommitAuthor("s\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\n", ""); !found || me.Session != "" {
		t.Errorf("CommitAuthor(no session) = %+v, %v", me, found)
	}
	for name, msg := range map[string]string{
		"none":          "subject only\n",
		"no type":       "s\n\nLockgate-Worker: bob\nLockgate-Session: bob\n",
		"no worker":     "s\n\nLockgate-Worker-Type: agent\n",
		"bad type":      "s\n\nLockgate-Worker: bob\nLockgate-Worker-Type: root\n",
		"two workers":   "s\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\nLockgate-Worker: eve\n",
		"two sessions":  "s\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\nLockgate-Session: a\nLockgate-Session: b\n",
		"bad session":   "s\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\nLockgate-Session: a b\n",
		"control":       "s\n\nLockgate-Worker: bo\x1bb\nLockgate-Worker-Type: agent\n",
		"format char":   "s\n\nLockgate-Worker: bo\u202eb\nLockgate-Worker-Type: agent\n",
		"invalid utf-8": "s\n\nLockgate-Worker: bo\xffb\nLockgate-Worker-Type: agent\n",
		"long worker":   "s\n\nLockgate-Worker: " + strings.Repeat("w", locks.MaxHolderLen+1) + "\nLockgate-Worker-Type: agent\n",
		"not last":      "s\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\n\nmore text\n",
		"subject only":  "Lockgate-Worker: bob\n",
		"too large":     "s\n\n" + strings.Repeat("x", MaxCommitMsgBytes) + "\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\n",
	} {
		if me, found := CommitAuthor(msg, "#"); found {
			t.Errorf("CommitAuthor(%s) = %+v, want no trailer", name, me)
		}
	}
}

// FuzzCommitAuthor: whatever the message, CommitAuthor does not panic and
// returns only identities lockgate would write.
func FuzzCommitAuthor(f *testing.F) {
	for _, m := range trailerMessages {
		f.Add(m)
	}
	f.Add("s\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\nLockgate-Session: bob\n")
	f.Fuzz(func(t *testing.T, msg string) {
		me, ok := CommitAuthor(msg, "#")
		if ok && (!trailerValue(me.Holder) || me.Check() != nil || !sessionID(me.Session) ||
			me.HolderType != "human" && me.HolderType != "agent") {
			t.Fatalf("CommitAuthor(%q) = %+v", msg, me)
		}
	})
}
