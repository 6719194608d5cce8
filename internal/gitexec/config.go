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
	"slices"
	"strings"
	"time"

	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// LocalConfigPath is the clone's own config file, the one
// `git config --local` reads and writes: shared by every worktree.
func LocalConfigPath(r *Repo) string { return filepath.Join(r.CommonDir, "config") }

// LocalConfig returns the value of a top-level key ("lockgate.store") in
// the clone's own config file, as `git config --local --includes --get KEY` would,
// and whether it is set. The file is parsed in-process, so that a hook
// reading it runs no git process; a file that includes others (followed,
// as `git config --get` follows them), or that the parser cannot read, is
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
	out := make([]ConfigValue, len(keys))
	type name struct{ section, name string }
	names := make([]name, len(keys))
	for i, key := range keys {
		section, n, found := strings.Cut(key, ".")
		if !found || section == "" || n == "" || strings.Contains(n, ".") {
			return nil, fmt.Errorf("git config key %q: want SECTION.NAME", key)
		}
		names[i] = name{section, n}
	}
	path := LocalConfigPath(r)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	lower := bytes.ToLower(b)
	include := bytes.Contains(lower, []byte("include"))
	if !include && !slices.ContainsFunc(names, func(n name) bool { return bytes.Contains(lower, []byte(strings.ToLower(n.section))) }) {
		return out, nil // the common case costs no parse
	}
	// The parser reads line continuations its own way.
	if !include && !bytes.Contains(b, []byte("\\\n")) && !bytes.Contains(b, []byte("\\\r\n")) {
		var c format.Config
		if format.NewDecoder(bytes.NewReader(b)).Decode(&c) == nil {
			for k, n := range names {
				for i := len(c.Sections) - 1; i >= 0; i-- {
					s := c.Sections[i]
					if s.IsName(n.section) && s.Options.Has(n.name) {
						out[k] = ConfigValue{Value: s.Options.Get(n.name), Set: true}
						break
					}
				}
			}
			return out, nil
		}
	}
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
