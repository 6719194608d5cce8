package hint

import (
	"regexp"
	"strings"
	"testing"
)

// TestKeysEndTheirCommand: "--" ends a command's flags, so keys that may
// need it come after every flag of their command.
func TestKeysEndTheirCommand(t *testing.T) {
	for id, tmpl := range Table {
		for _, m := range regexp.MustCompile("`([^`]*)`").FindAllStringSubmatch(tmpl, -1) {
			if i := strings.Index(m[1], "%k"); i >= 0 && i != len(m[1])-2 {
				t.Errorf("hint %d: %%k is not last in `%s`", id, m[1])
			}
		}
	}
}

func TestDashKeysAfterDoubleDash(t *testing.T) {
	for _, c := range []struct {
		id   ID
		args []any
		want string
	}{
		{Clear, []any{"-rf"}, "or remove it (logged): `lockgate lock clear --force -- -rf`"},
		{Clear, []any{"a.py"}, "or remove it (logged): `lockgate lock clear --force a.py`"},
		{WaitAcquire, []any{"4d3h", []string{"a.py", "-x"}}, "wait for it: `lockgate lock acquire --wait 4d3h -- a.py -x`"},
		{WaitPackage, []any{"5m", "WP-1"}, "wait for it: `lockgate lock acquire --wait 5m --package WP-1`"},
		{AskRelease, []any{"-al", "-rf"}, "ask -al to run `lockgate lock release -- -rf`"},
	} {
		if got := Line(c.id, c.args...); got != c.want {
			t.Errorf("Line(%d, %v) = %q, want %q", c.id, c.args, got, c.want)
		}
	}
}

// TestCarry: the options go into the commands the user runs; identity
// only into those that act as a worker; none into one asked of another.
func TestCarry(t *testing.T) {
	where, who := []string{"-C", "/r"}, []string{"--as", "'a b'"}
	for _, c := range []struct {
		id   ID
		args []any
		want string
	}{
		{AskRelease, []any{"al", "x"}, "ask al to run `lockgate lock release x`"},
		{PathLocked, []any{"al", "x", "1h", "x"}, "wait for al to run `lockgate lock release x`, or take it when free: `lockgate -C /r --as 'a b' lock acquire --wait 1h x`"},
		{Paused, []any{"F", "al", "F"}, "wait with `lockgate -C /r pause wait F`; al resumes with `lockgate unpause F`"},
		{PortKey, []any{"80"}, "ports are leased, not locked: see them with `lockgate -C /r ports list`, give one back with `lockgate -C /r --as 'a b' ports release 80`"},
		{BypassHook, []any{"commit"}, "to bypass in an emergency: `LOCKGATE_SKIP=1 git commit …` (the bypass is logged)"},
	} {
		if got := Carry(Line(c.id, c.args...), where, who); got != c.want {
			t.Errorf("Carry(%d) = %q, want %q", c.id, got, c.want)
		}
	}
}
