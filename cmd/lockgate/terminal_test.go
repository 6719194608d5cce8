package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawTerminalChars are characters that must never reach a terminal raw:
// ESC and BEL (escape sequences, window titles), CSI as one byte, the
// right-to-left override, a zero-width space and the line separator.
var rawTerminalChars = []string{"\x1b", "\a", "\u009b", "\u202e", "\u200b", "\u2028"}

func assertNoRaw(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range rawTerminalChars {
		if strings.Contains(out, c) {
			t.Errorf("%s prints %q raw:\n%q", what, c, out)
		}
	}
}

// TestControlCharactersRefusedAtInput: worker ids, keys and task ids with
// control or format characters are usage errors (exit 2).
func TestControlCharactersRefusedAtInput(t *testing.T) {
	t.Parallel()
	r := newHintRepo(t, plainConfig)
	for _, bad := range []string{"evil\x1b[31m", "bell\a", "rtl\u202eevil", "zero\u200bwidth", "line\u2028sep"} {
		q := "$'" + strings.NewReplacer("\x1b", `\x1b`, "\a", `\a`, "\u202e", `\u202e`, "\u200b", `\u200b`, "\u2028", `\u2028`).Replace(bad) + "'"
		for _, line := range []string{
			"lockgate --as " + q + " lock acquire a.py",
			"LOCKGATE_WORKER=" + q + " lockgate lock list",
			"lockgate lock acquire " + q,
			"lockgate lock acquire 'api:GET /v1/'" + q,
			"lockgate lock acquire activity:A1 --task " + q,
			"lockgate pause " + q,
		} {
			_, stderr, code := r.run(alice, line)
			if code != 2 {
				t.Errorf("%s: exit %d, want 2 (usage)\n%s", line, code, stderr)
			}
			assertNoRaw(t, line, stderr)
		}
	}
}

// TestForeignRecordsEscaped: records and events written by older versions
// or other tools may hold such characters; every human-readable output
// escapes them.
func TestForeignRecordsEscaped(t *testing.T) {
	t.Parallel()
	r := newHintRepo(t, plainConfig)
	holder := "mallory\x1b]0;pwned\a\u202e"
	record := `{"key":"a.py","holder":"` + jsonEsc(holder) + `","holder_type":"human","session":"s\u2028x\u001b[2J",` +
		`"pid":1,"host":"h","created_at":"2020-01-01T00:00:00Z","expires_at":"2099-01-01T00:00:00Z",` +
		`"reason":"fix\u200b\u001b[31m red\nhint: fake","token":"t0","fence":1}`
	r.write(".git/lockgate/locks/a.py.lock", record)
	pause := strings.Replace(strings.Replace(record, `"key":"a.py"`, `"key":"feature:F-1:pause"`, 1), `"fence":1`, `"fence":2`, 1)
	r.write(".git/lockgate/locks/keys/feature%3A%46-1%3Apause.lock", pause)
	journal := `{"timestamp":"2024-01-01T00:00:00Z","worker":"` + jsonEsc(holder) + `","worker_type":"human","action":"lock_acquire","key":"a.py","details":"x\u001b[2Jy\u202e"}` + "\n"
	if err := os.MkdirAll(filepath.Join(r.dir, ".git", "lockgate"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(r.dir, ".git", "lockgate", "events.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(journal); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r.write("a.py", "changed\n")
	r.git("add", "a.py")

	for _, line := range []string{
		"lockgate lock list",
		"lockgate lock list --json",
		"lockgate lock acquire a.py",
		"lockgate --json lock acquire a.py",
		"lockgate lock check a.py",
		"lockgate lock release a.py",
		"lockgate lock refresh a.py",
		"lockgate pause status F-1",
		"lockgate pause F-1",
		"lockgate log",
		"lockgate log --json",
		"lockgate check",
		"lockgate check --format github",
		"lockgate guard edit a.py",
		"git commit -q -m change",
		"lockgate lock clear a.py --force",
	} {
		out, errOut, _ := r.run(bob, line)
		assertNoRaw(t, line, out+errOut)
		if strings.Contains(errOut, "\nhint: fake") || strings.Contains(out, "\nhint: fake") {
			t.Errorf("%s: a reason's newline starts a line of its own:\n%s%s", line, out, errOut)
		}
	}
	out := r.must(bob, "lockgate log")
	if !strings.Contains(out, `mallory\x1b]0;pwned\x07\u202e`) {
		t.Errorf("log does not show the escaped worker:\n%s", out)
	}
}

func jsonEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 {
			b.WriteString(`\u` + hex4(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf]})
}
