package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r must not reach a terminal raw.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Check refuses s when it holds an unsafe character or invalid UTF-8;
// what names the value in the message ("worker id", "reason").
func Check(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %s is not valid UTF-8", what, Field(s))
	}
	for _, r := range s {
		if Unsafe(r) {
			return fmt.Errorf("%s %s contains the control or format character %U", what, Field(s), r)
		}
	}
	return nil
}

// shownBytes bounds how much of a long input a message repeats.
const shownBytes = 200

// Shorten returns s for a message: whole when short, else its start (cut
// on a character boundary) and its length, so that a huge input is never
// echoed whole.
func Shorten(s string) string {
	if len(s) <= shownBytes {
		return s
	}
	i := shownBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:i], len(s))
}

// Field escapes every unsafe character of a one-line value, newlines and
// tabs included: \n, \t, \x1b, \u202e; invalid UTF-8 bytes as \xNN.
func Field(s string) string { return escape(s, false) }

// Text escapes like Field but keeps newlines and tabs, for messages that
// span lines.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100 && Unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s needs no escaping (the common case, without
// allocating).
func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return cleanSlow(s[i:], keepLines)
		}
		if c < 0x20 || c == 0x7f {
			if !keepLines || (c != '\n' && c != '\t') {
				return false
			}
		}
	}
	return true
}

func cleanSlow(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if Unsafe(r) && !(keepLines && (r == '\n' || r == '\t')) {
			return false
		}
		i += n
	}
	return true
}

// ShellQuote quotes s for any POSIX shell, /bin/sh included: in single
// quotes, each single quote written as '\”. Every byte, a newline too,
// reaches the shell's word as it is.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
