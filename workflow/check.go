package workflow

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/internal/safetext"
)

// errNotEvent reports a file under events/ that is not an event's
// journal line.
var errNotEvent = errors.New("not an event")

// NotEventsError says that a commit is not one lockgate writes on the
// workflow branch.
type NotEventsError struct {
	Commit string // "" when the reason names it
	Err    error
}

func (e *NotEventsError) Error() string {
	if e.Commit == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("commit %s: %v", e.Commit, e.Err)
}

func (e *NotEventsError) Unwrap() error { return e.Err }

// CheckEventCommits checks that each of commits (full object names) is an
// event commit, one this package could have written on the workflow
// branch: its tree holds events/ and nothing else; it only adds files to
// the tree of each of its parents, never deletes or changes one (the
// branch only grows: an event once on it stays as it was); and events/
// reads as ReadEvents reads it (every file an event, at the path its id
// gives). A commit that is not is a *NotEventsError; other errors are git
// failing.
//
// base are refs whose events are known good (the branch as it is before
// a push): a commit's tree is read against them, so that one that only
// adds events costs those events. A base ref that does not exist is
// skipped.
func CheckEventCommits(ctx context.Context, cfg Config, base, commits []string) error {
	if len(commits) == 0 {
		return nil
	}
	for _, c := range commits {
		if !objectName(c) {
			return fmt.Errorf("check event commits: %q is not a full object name", c)
		}
	}
	r, err := newLogReader(cfg, &readStats{})
	if err != nil {
		return err
	}
	if err := r.start(ctx); err != nil {
		return err
	}
	infos, err := readCommitInfos(ctx, &r, commits)
	var v2 bool
	for _, ci := range infos {
		v2 = v2 || ci.v2
	}
	if err == nil && v2 {
		var known map[string][]byte
		if known, err = knownEvents(ctx, cfg, base); err == nil {
			err = checkFormat2(ctx, &r, commits, infos, known)
		}
	}
	r.cat.close()
	if err != nil {
		return err
	}
	var old []string // of format 1
	for _, c := range commits {
		if !infos[c].v2 {
			old = append(old, c)
		}
	}
	if len(old) == 0 {
		return nil
	}
	commits = old
	if err := checkRoots(ctx, cfg, commits); err != nil {
		return err
	}
	if err := checkGrowth(ctx, cfg, commits); err != nil {
		return err
	}
	_, _, err = readEvents(ctx, cfg, append(append([]string(nil), base...), commits...), &readStats{})
	if errors.Is(err, errShape) || errors.Is(err, errNotEvent) {
		return &NotEventsError{Err: err}
	}
	return err
}

// checkRoots checks that the tree of each commit has one entry, the tree
// events/. It asks git cat-file for the size of the root tree and for
// events/: a tree object is "<mode> <name>\0<binary id>" per entry, so a
// root of exactly the size of "40000 events\0<id>" holds events/ alone.
func checkRoots(ctx context.Context, cfg Config, commits []string) error {
	r, err := newLogReader(cfg, &readStats{})
	if err != nil {
		return err
	}
	if err := r.start(ctx); err != nil {
		return err
	}
	defer r.cat.close()
	var bad *NotEventsError
	err = r.cat.round(func(w *bufio.Writer) error {
		for _, c := range commits {
			if _, err := fmt.Fprintf(w, "info %s^{commit}\ninfo %[1]s^{tree}\ninfo %[1]s:%s\n", c, eventsDir); err != nil {
				return err
			}
		}
		return nil
	}, func(br *bufio.Reader) error {
		for _, c := range commits {
			var info [3]objectInfo
			for i := range info {
				var err error
				if info[i], err = r.cat.info(br); err != nil {
					return fmt.Errorf("check commit %s: %w", c, err)
				}
			}
			if bad != nil {
				continue // read every answer: the round expects it
			}
			switch {
			case info[0].missing || info[0].typ != "commit":
				bad = &NotEventsError{Commit: c, Err: errors.New("not a commit")}
			case info[2].missing || info[2].typ != "tree":
				bad = &NotEventsError{Commit: c, Err: fmt.Errorf("%w: its tree has no %s/ directory", errShape, eventsDir)}
			case info[1].size != int64(len("40000 "+eventsDir+"\x00")+len(info[2].oid)/2):
				bad = &NotEventsError{Commit: c, Err: fmt.Errorf("%w: its tree holds more than %s/", errShape, eventsDir)}
			}
		}
		return nil
	})
	if err != nil {
		return r.ctxErr(ctx, err)
	}
	if bad != nil {
		return bad
	}
	return nil
}

// checkGrowth checks that each of commits only adds files to the tree of
// each of its parents, with one `git diff-tree -m` (a merge is compared
// with every parent): a file deleted or changed is a *NotEventsError
// naming the file and the commit. Reading events only from what is added
// is then all it takes to read the branch.
func checkGrowth(ctx context.Context, cfg Config, commits []string) error {
	r, err := newLogReader(cfg, &readStats{})
	if err != nil {
		return err
	}
	cmd := r.command(ctx, "diff-tree", "--stdin", "-r", "-m", "-z", "--no-renames")
	cmd.Stdin = strings.NewReader(strings.Join(commits, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("check event commits: git diff-tree: %s", msg)
	}
	// -z: "<commit>\0" before the changes of each commit and parent, then
	// ":<modes> <blobs> <status>\0<path>\0" per change.
	out := stdout.String()
	commit := ""
	for out != "" {
		var tok string
		tok, out, _ = strings.Cut(out, "\x00")
		if !strings.HasPrefix(tok, ":") {
			commit = tok
			continue
		}
		var path string
		path, out, _ = strings.Cut(out, "\x00")
		status := tok[strings.LastIndexByte(tok, ' ')+1:]
		var what string
		switch {
		case status == "A":
			continue
		case status == "D":
			what = "deletes"
		default:
			what = "changes"
		}
		return &NotEventsError{Err: fmt.Errorf("commit %s %s %s: %w", commit, what, safetext.Field(path), errShrinks)}
	}
	return nil
}

// errShrinks reports a commit that deletes or changes a file of its
// parent on the workflow branch.
var errShrinks = errors.New("the workflow branch only grows (event files are added to it, never deleted or changed)")

// objectName reports a full object name: 40 (SHA-1) or 64 (SHA-256)
// lowercase hex digits.
func objectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}
