// Package termstyle colours what lockgate tells people on a terminal:
// refusals and errors, the holders and expiries they name, warnings and
// hints. Colour is on when the output is a terminal, unless NO_COLOR is set
// or TERM is dumb; --color always|never decides instead. Text is escaped
// before it is painted: the only escape sequences written are lockgate's.
package termstyle

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Role is what a piece of text is.
type Role string

// The roles lockgate paints.
const (
	Error   Role = "error"   // "refused", the prefix of an error
	Warning Role = "warning" // the word "warning"
	Rule    Role = "rule"    // a violated rule's id
	Path    Role = "path"    // the path or key a refusal is about
	Holder  Role = "holder"  // who holds a lock
	Expiry  Role = "expiry"  // until when
	Hint    Role = "hint"    // the word "hint"
)

var sgr = map[Role]string{
	Error:   "1;31",
	Warning: "1;33",
	Rule:    "31",
	Path:    "1",
	Holder:  "1;35",
	Expiry:  "36",
	Hint:    "32",
}

// Style paints text by role, or leaves it alone when colour is off.
type Style struct{ on bool }

// On reports whether s paints.
func (s Style) On() bool { return s.on }

// Paint returns text in the colour of role.
func (s Style) Paint(role Role, text string) string {
	if !s.on || text == "" {
		return text
	}
	code, ok := sgr[role]
	if !ok {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Modes of --color.
const (
	Auto   = "auto"
	Always = "always"
	Never  = "never"
)

// For decides the style of output to f: mode (--color) first, then
// NO_COLOR and TERM, then whether f is a terminal.
func For(mode string, getenv func(string) string, f *os.File) (Style, error) {
	switch mode {
	case Always:
		return Style{on: true}, nil
	case Never:
		return Style{}, nil
	case Auto, "":
	default:
		return Style{}, fmt.Errorf("--color %q: want auto, always or never", mode)
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return Style{}, nil
	}
	return Style{on: IsTerminal(f)}, nil
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
