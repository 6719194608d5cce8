package termstyle

import (
	"os"
	"testing"
)

func TestFor(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out") // not a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		mode string
		env  func(string) string
		on   bool
	}{
		{Always, env("NO_COLOR", "1"), true}, // the flag decides
		{Never, env(), false},
		{Auto, env(), false}, // a file, not a terminal
		{"", env("TERM", "xterm"), false},
	} {
		st, err := For(c.mode, c.env, f)
		if err != nil || st.On() != c.on {
			t.Errorf("For(%q): on %v, %v; want %v", c.mode, st.On(), err, c.on)
		}
	}
	if _, err := For("sometimes", env(), f); err == nil {
		t.Error("For(sometimes): no error")
	}
	if got := (Style{on: true}).Paint(Holder, "alice"); got != "\x1b[1;35malice\x1b[0m" {
		t.Errorf("Paint = %q", got)
	}
	if got := (Style{}).Paint(Holder, "alice"); got != "alice" {
		t.Errorf("Paint off = %q", got)
	}
}
