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
