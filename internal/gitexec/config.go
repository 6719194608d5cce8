package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// LocalConfigPath is the clone's own config file, the one
// `git config --local` reads and writes: shared by every worktree.
func LocalConfigPath(r *Repo) string { return filepath.Join(r.CommonDir, "config") }

// LocalConfig returns the value of a top-level key ("lockgate.store") in
// the clone's own config file, as `git config --local --includes --get KEY` would,
// and whether it is set. The file is read in-process, so that a hook
// reading it runs no git process; a file that includes others (followed,
// as `git config --get` follows them), or that git would not read, is
// left to git itself.
func LocalConfig(ctx context.Context, r *Repo, key string) (value string, ok bool, err error) {
	vs, err := LocalConfigs(ctx, r, key)
	if err != nil {
		return "", false, err
	}
	return vs[0].Value, vs[0].Set, nil
}

// ConfigValue is one key's value, and whether it is set.
type ConfigValue struct {
	Value string
	Set   bool
}

// LocalConfigs is LocalConfig for several keys, reading and parsing the
// file once (a hook reads four).
func LocalConfigs(ctx context.Context, r *Repo, keys ...string) ([]ConfigValue, error) {
	names := make([]configKey, len(keys))
	for i, key := range keys {
		section, n, found := strings.Cut(key, ".")
		if !found || section == "" || n == "" || strings.Contains(n, ".") {
			return nil, fmt.Errorf("git config key %q: want SECTION.NAME", key)
		}
		names[i] = configKey{lowerASCII(section), lowerASCII(n)}
	}
	path := LocalConfigPath(r)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return make([]ConfigValue, len(keys)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if out, ok := readConfig(b, names); ok {
		return out, nil
	}
	out := make([]ConfigValue, len(keys))
	for k, key := range keys {
		v, err := RepoOutput(ctx, r, "config", "--local", "--includes", "--get", key)
		var ee *Error
		var xe *exec.ExitError
		if errors.As(err, &ee) && errors.As(ee.Err, &xe) && xe.ExitCode() == 1 {
			continue // not set
		}
		if err != nil {
			return nil, err
		}
		out[k] = ConfigValue{Value: strings.TrimSuffix(string(v), "\n"), Set: true}
	}
	return out, nil
}

// configKey is a key asked of a config file: its section and its name,
// in lower case (git compares them so).
type configKey struct{ section, name string }

// readConfig reads a config file as git reads it (the parser of git's
// config.c, byte for byte) and returns, for each key, its last value in
// the file, as `git config --get` prints it: a key written without "="
// has the empty value. A key in a section with a subsection ([s "sub"],
// or the older [s.sub]) is another key. ok is false for a file left to
// git: one git would not read (a bad line), one that includes other files
// ([include] or [includeIf …]), or one holding a NUL byte (git's values
// end at it).
func readConfig(src []byte, keys []configKey) (out []ConfigValue, ok bool) {
	if bytes.IndexByte(src, 0) >= 0 {
		return nil, false
	}
	// git skips a UTF-8 byte order mark, and rejects the start of one.
	if bom := "\xef\xbb\xbf"; bytes.HasPrefix(src, []byte(bom)) {
		src = src[len(bom):]
	} else if len(src) > 0 && src[0] == bom[0] {
		return nil, false
	}
	out = make([]ConfigValue, len(keys))
	p := configParser{src: src}
	var section, name, value []byte
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return out, true
			}
			comment = false
			continue
		case comment, isConfigSpace(c):
			continue
		case c == '#' || c == ';':
			comment = true
			continue
		case c == '[':
			if section, ok = p.header(section[:0]); !ok || len(section) == 0 {
				return nil, false
			}
			if base, _, _ := bytes.Cut(section, []byte(".")); string(base) == "include" || string(base) == "includeif" {
				return nil, false
			}
			continue
		case !isConfigAlpha(c):
			return nil, false
		}
		// A key: its name, then nothing (the empty value), or "=" and a value.
		name = append(name[:0], lowerByte(c))
		for {
			c = p.next()
			if p.eof || !isConfigKeyChar(c) {
				break
			}
			name = append(name, lowerByte(c))
		}
		for c == ' ' || c == '\t' {
			c = p.next()
		}
		value = value[:0]
		if c != '\n' {
			if c != '=' {
				return nil, false
			}
			if value, ok = p.value(value); !ok {
				return nil, false
			}
		}
		for i, k := range keys {
			if string(section) == k.section && string(name) == k.name {
				out[i] = ConfigValue{Value: string(value), Set: true}
			}
		}
	}
}

// configParser reads a config file one byte at a time.
type configParser struct {
	src []byte
	pos int
	eof bool // the end was read
}

// next returns the next byte; CR LF reads as LF, and the end of the file
// as LF, setting eof (as git's get_next_char).
func (p *configParser) next() byte {
	if p.pos >= len(p.src) {
		p.eof = true
		return '\n'
	}
	c := p.src[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.src) && p.src[p.pos] == '\n' {
		p.pos++
		return '\n'
	}
	return c
}

// header reads a section header after its "[", appending to dst the
// section's name in lower case, and ".subsection" for a subsection (git's
// get_base_var).
func (p *configParser) header(dst []byte) ([]byte, bool) {
	for {
		c := p.next()
		switch {
		case p.eof:
			return dst, false
		case c == ']':
			return dst, true
		case isConfigSpace(c):
			return p.subsection(dst, c)
		case !isConfigKeyChar(c) && c != '.':
			return dst, false
		}
		dst = append(dst, lowerByte(c))
	}
}

// subsection reads the quoted subsection of a header and its "]", c being
// the blank after the section's name (git's get_extended_base_var).
func (p *configParser) subsection(dst []byte, c byte) ([]byte, bool) {
	for {
		if c == '\n' {
			return dst, false
		}
		if c = p.next(); !isConfigSpace(c) {
			break
		}
	}
	if c != '"' {
		return dst, false
	}
	dst = append(dst, '.')
	for {
		c := p.next()
		if c == '\n' {
			return dst, false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return dst, false
			}
		}
		dst = append(dst, c)
	}
	return dst, p.next() == ']'
}

// value reads a value after its "=" to the end of its line, appending it
// to dst (git's parse_value): quotes removed, escapes replaced, a comment
// dropped, blanks at either end dropped and every blank between words
// kept as one space.
func (p *configParser) value(dst []byte) ([]byte, bool) {
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		switch {
		case c == '\n':
			return dst, !quote
		case comment:
			continue
		case !quote && isConfigSpace(c):
			if len(dst) > 0 {
				space++
			}
			continue
		case !quote && (c == ';' || c == '#'):
			comment = true
			continue
		}
		for ; space > 0; space-- {
			dst = append(dst, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue // a line continued
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return dst, false
			}
		case '"':
			quote = !quote
			continue
		}
		dst = append(dst, c)
	}
}

// git's own classes of bytes, ASCII only.
func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isConfigAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isConfigKeyChar(c byte) bool {
	return isConfigAlpha(c) || '0' <= c && c <= '9' || c == '-'
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

// SetLocalConfig sets key in the clone's own config file
// (`git config --local KEY VALUE`); unset removes every value of it.
//
// Every worktree of a clone writes that one file, and git refuses a
// writer that finds its lock (config.lock) taken instead of waiting:
// worktrees whose first commands record the clone's store at once would
// lose writes. A refused write is tried again for a while.
func SetLocalConfig(ctx context.Context, r *Repo, key, value string, unset bool) error {
	delay := 2 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := setLocalConfig(ctx, r, key, value, unset)
		var ee *Error
		if err == nil || attempt >= 40 || !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "could not lock config file") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay + time.Duration(rand.Int64N(int64(delay)))):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

func setLocalConfig(ctx context.Context, r *Repo, key, value string, unset bool) error {
	if !unset {
		_, err := RepoOutput(ctx, r, "config", "--local", "--replace-all", key, value)
		return err
	}
	_, err := RepoOutput(ctx, r, "config", "--local", "--unset-all", key)
	var ee *Error
	var xe *exec.ExitError
	if errors.As(err, &ee) && errors.As(ee.Err, &xe) && xe.ExitCode() == 5 {
		return nil // was not set
	}
	return err
}
