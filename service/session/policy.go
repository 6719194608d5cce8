package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
)

// JudgeByBase makes the policy committed at the base of a change the one
// that judges it, and holds the clone's lock store to the store that
// policy names: a change never loosens the rules it is judged by, as it
// would if its own .lockgate.yaml (checked out in a CI clone) chose them.
// rng is the change as `--range` names it; "" is verify's default, HEAD's
// commits on no remote-tracking ref, whose base is where HEAD leaves the
// remote's default branch (else its upstream). -c FILE names the policy
// explicitly and is kept.
//
// A base without .lockgate.yaml (lockgate adopted inside the range), or a
// range without a base, is judged by the built-in defaults and the
// clone's recorded store, with a warning. Bases that commit different
// policies are invalid input: which one judges is the caller's to say.
// Call it before the store is opened.
func (e *Workspace) JudgeByBase(ctx context.Context, rng string) error {
	if e.JudgeByFile() {
		return nil
	}
	what, name := "--range "+rng, ""
	var bases []string
	var err error
	if rng == "" {
		what = "HEAD's commits on no remote-tracking ref"
		bases, err = e.defaultBase(ctx)
	} else {
		bases, err = e.rangeBases(ctx, rng)
		if a, _, ok := strings.Cut(rng, ".."); ok && a != "" && !strings.Contains(rng, "...") {
			name = a // as the user wrote it: origin/main
		}
	}
	if err != nil {
		return err
	}
	return e.judgeBy(ctx, what, name, bases)
}

// JudgeByHead makes the policy committed on HEAD the one that judges the
// staged change (verify --staged), as judgeByBase does for a range.
func (e *Workspace) JudgeByHead(ctx context.Context) error {
	if e.JudgeByFile() {
		return nil
	}
	var bases []string
	if out, err := gitexec.RepoOutput(ctx, e.repo, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err == nil {
		bases = strings.Fields(string(out))
	}
	return e.judgeBy(ctx, "the staged change", "HEAD", bases)
}

// JudgeByFile makes -c FILE, when given, the policy that judges a change,
// and the store it names the one the clone's is held to; it reports
// whether -c was given.
func (e *Workspace) JudgeByFile() bool {
	e.Judging = true
	return e.Opts.ConfigFile != ""
}

// judgeBy reads the policy committed at bases (what names the change in
// messages, name the base when the user named it).
func (e *Workspace) judgeBy(ctx context.Context, what, name string, bases []string) error {
	if len(bases) == 0 {
		e.Warn("warning", fmt.Sprintf("%s has no base commit to read the policy from: judging by the built-in defaults and this clone's lock store; name the policy with -c FILE", what))
		e.Cfg = config.Default()
		return nil
	}
	var data []byte
	found := false
	for i, b := range bases {
		d, f, err := gitexec.CommitFile(ctx, e.repo, b, config.DefaultFile)
		if err != nil {
			return fmt.Errorf("read the policy of the base: %w", err)
		}
		if i > 0 && (f != found || !bytes.Equal(d, data)) {
			return Usagef("%s: its bases %s and %s commit different policies (%s); name one base (A..B), or the policy with -c FILE", what, Short(bases[0]), Short(b), config.DefaultFile)
		}
		data, found = d, f
	}
	e.Base = bases[0]
	if name == "" {
		name = Short(bases[0])
	}
	if !found {
		e.Warn("warning", fmt.Sprintf("the base of %s (%s) has no %s: judging by the built-in defaults and this clone's lock store; name the policy with -c FILE", what, Short(bases[0]), config.DefaultFile))
		e.Cfg = config.Default()
		return nil
	}
	cfg, err := config.LoadBytes(name+":"+config.DefaultFile, data)
	if err != nil {
		return err
	}
	e.Cfg = cfg
	return nil
}

// rangeBases are the commits a range excludes (the ^A of git rev-parse
// A..B, the merge base of A...B), each once.
func (e *Workspace) rangeBases(ctx context.Context, rng string) ([]string, error) {
	out, err := gitexec.RepoOutput(ctx, e.repo, "rev-parse", rng, "--")
	if err != nil {
		return nil, fmt.Errorf("find the base of --range %s: %w", rng, err)
	}
	var bases []string
	for _, f := range strings.Fields(string(out)) {
		if b, ok := strings.CutPrefix(f, "^"); ok && !slices.Contains(bases, b) {
			bases = append(bases, b)
		}
	}
	return bases, nil
}

// defaultBase is the base of verify's default range: where HEAD leaves
// the remote's default branch (refs/remotes/REMOTE/HEAD), else its
// upstream; none when the clone has neither. Not every remote-tracking
// ref: a branch pushed with a looser policy is one too.
func (e *Workspace) defaultBase(ctx context.Context) ([]string, error) {
	for _, ref := range []string{"refs/remotes/" + e.LogRemote() + "/HEAD", "@{upstream}"} {
		if _, err := gitexec.RepoOutput(ctx, e.repo, "rev-parse", "-q", "--verify", ref+"^{commit}"); err != nil {
			continue
		}
		out, err := gitexec.RepoOutput(ctx, e.repo, "merge-base", "HEAD", ref)
		var ge *gitexec.Error
		if errors.As(err, &ge) && ge.ExitCode() == 1 {
			continue // no common history
		}
		if err != nil {
			return nil, fmt.Errorf("find the base of HEAD on %s: %w", ref, err)
		}
		if f := strings.Fields(string(out)); len(f) > 0 {
			return f[:1], nil
		}
	}
	return nil, nil
}

// Short is a commit name as messages show it.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
