package workflow

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// historyKey starts what names the events of a format-2 ref, before its
// tip commit: its events are those of the history, not of one tree.
const historyKey = "commit "

// readHistory reads every event of the format-2 history at tip: the
// event files of every commit it reaches, down to the bases its format
// names.
func (r *logReader) readHistory(ctx context.Context, ref, tip string) ([]journal.Event, bool, bool, error) {
	r.stats.full++
	fm, err := r.formatOf(ref, tip)
	if err != nil {
		return nil, false, false, err
	}
	for _, b := range fm.bases {
		if _, err := r.git(ctx, "rev-parse", "--verify", "--quiet", b+"^{commit}"); err != nil {
			return nil, false, false, fmt.Errorf("%s: %w: its base %s is not in this clone; fetch the branch whole (git fetch --unshallow, or a clone without --depth)", ref, errShallow, b)
		}
	}
	files, err := r.listObjects(ctx, ref, tip, fm.bases)
	if err != nil {
		return nil, false, false, err
	}
	// The bases' events: each a format-1 tree, which the commit that
	// migrated it holds (its subtrees the same objects, so the listing
	// above, which leaves out what the bases reach, lacks them).
	at := make(map[string]bool, len(files))
	for _, f := range files {
		at[f.path] = true
	}
	for _, b := range fm.bases {
		tree, err := r.git(ctx, "rev-parse", "--verify", "--quiet", b+"^{commit}:"+eventsDir)
		if err != nil {
			continue // a base without events
		}
		old, err := r.lsTree(ctx, ref, strings.TrimSpace(string(tree)))
		if err != nil {
			return nil, false, false, err
		}
		for _, f := range old {
			if !at[f.path] {
				at[f.path] = true
				files = append(files, f)
			}
		}
	}
	evs, err := r.readBlobs(ref, files)
	return evs, false, false, err
}

// readSince reads the events of the format-2 history at tip from the
// cache c of an earlier tip of it, and the commits since; ok is false
// when c cannot serve (another format, or a tip the history does not
// reach: a branch rewound or replaced), and the history is then read
// whole.
func (r *logReader) readSince(ctx context.Context, ref, key, tip string, c *cacheIndex) (evs []journal.Event, partial, ok bool, err error) {
	old, was := strings.CutPrefix(c.tree, historyKey)
	if !was || !objectName(old) {
		return nil, false, false, nil
	}
	if reached, err := r.isAncestor(ctx, old, tip); err != nil || !reached {
		return nil, false, false, err
	}
	added, err := r.listObjects(ctx, ref, tip, []string{old})
	if err != nil {
		return nil, false, false, err
	}
	if len(added) == 0 {
		// Commits without events of their own (merges): the same events.
		r.stats.cached++
		evs, n, err := c.decode(0, len(c.blocks), Match{})
		r.stats.blocks += n
		if err != nil {
			return nil, false, false, nil
		}
		r.stats.decoded += len(evs)
		writeCache(r.common, ref, key, evs)
		return evs, false, true, nil
	}
	evs, partial, err = r.readSpliced(ref, key, c, added)
	switch {
	case err == nil:
		return evs, partial, true, nil
	case errors.Is(err, errCache):
		return nil, false, false, nil
	}
	return nil, false, false, err
}

// isAncestor reports whether commit a is reachable from commit b. A
// commit the repository no longer has is reachable from nothing.
func (r *logReader) isAncestor(ctx context.Context, a, b string) (bool, error) {
	err := r.command(ctx, "merge-base", "--is-ancestor", a, b).Run()
	var exit interface{ ExitCode() int }
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	case errors.As(err, &exit) && exit.ExitCode() == 1, errors.As(err, &exit) && exit.ExitCode() == 128:
		return false, nil
	}
	return false, fmt.Errorf("git merge-base --is-ancestor: %w", err)
}

// listObjects lists the event files of the commits tip reaches and none
// of not reaches (`git rev-list --objects`): each blob once, at the
// first path it was found under. Files at one path with two blobs (an
// event written twice, in two forms) are listed once, with the smaller
// blob name, so that every clone reads the same. A path that is not of
// the events/xx/yy/<name> layout, nor the format blob, is an error.
func (r *logReader) listObjects(ctx context.Context, ref, tip string, not []string) ([]file, error) {
	var in strings.Builder
	in.WriteString(tip + "\n")
	for _, n := range not {
		in.WriteString("^" + n + "\n")
	}
	cmd := r.command(ctx, "rev-list", "--objects", "--stdin")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := runOutput(cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: list the history's events: %w", ref, err)
	}
	shallow := r.shallowCommits()
	var files []file
	at := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		oid, path, named := strings.Cut(line, " ")
		if !objectName(oid) {
			if line == "" {
				continue
			}
			return nil, fmt.Errorf("%s: git rev-list: unexpected output %q", ref, line)
		}
		if !named && shallow[oid] {
			// The commits below it are not in this clone: the events
			// read would be some of the branch's, and a lock missing
			// from them could let a commit through.
			return nil, fmt.Errorf("%s: %w: commit %s of its history is where this clone's shallow history stops; fetch the branch whole (git fetch --unshallow, or a clone without --depth)", ref, errShallow, oid)
		}
		rest, underEvents := strings.CutPrefix(path, eventsDir+"/")
		switch {
		case path == "" || path == eventsDir || rest == formatFile:
			continue // a commit, a root tree, events/, the format blob
		case !underEvents:
			return nil, fmt.Errorf("%s: %s: %w (not the events/xx/yy/<id>.json layout)", ref, path, errShape)
		case strings.Count(rest, "/") < 2:
			if !shardDirs(rest) {
				return nil, fmt.Errorf("%s: %s: %w (not the events/xx/yy/<id>.json layout)", ref, path, errShape)
			}
			continue
		case strings.Count(rest, "/") > 2:
			return nil, fmt.Errorf("%s: %s: %w (not the events/xx/yy/<id>.json layout)", ref, path, errShape)
		}
		if i, ok := at[rest]; ok {
			files[i].blob = min(files[i].blob, oid)
			continue
		}
		at[rest] = len(files)
		files = append(files, file{path: rest, blob: oid})
	}
	return files, nil
}

// errShallow reports a history this clone has only part of.
var errShallow = errors.New("the workflow branch's history is shallow here")

// shallowCommits are the commits where the clone's history was cut
// (<git-dir>/shallow, of a clone or fetch with --depth), nil for a
// whole one.
func (r *logReader) shallowCommits() map[string]bool {
	data, err := os.ReadFile(filepath.Join(r.common, "shallow"))
	if err != nil || len(data) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, c := range strings.Fields(string(data)) {
		set[c] = true
	}
	return set
}

// formatOf reads the format blob of commit tip on ref.
func (r *logReader) formatOf(ref, tip string) (branchFormat, error) {
	var data []byte
	err := r.cat.round(func(w *bufio.Writer) error {
		_, err := fmt.Fprintf(w, "contents %s:%s/%s\n", tip, eventsDir, formatFile)
		return err
	}, func(br *bufio.Reader) error {
		info, err := r.cat.info(br)
		switch {
		case err != nil:
			return err
		case info.missing:
			return fmt.Errorf("%s: %s: missing", ref, formatFile)
		case info.typ != "blob" || info.size > maxFormatBytes:
			// Read past what was sent, so the reader stays in step.
			if _, err := io.CopyN(io.Discard, br, info.size+1); err != nil {
				return r.cat.failed(err)
			}
			return fmt.Errorf("%s: %s: %w (a %s of %d bytes)", ref, formatFile, errFormat, info.typ, info.size)
		}
		data = make([]byte, info.size+1)
		if _, err := io.ReadFull(br, data); err != nil {
			return r.cat.failed(err)
		}
		data = data[:info.size]
		return nil
	})
	if err != nil {
		return branchFormat{}, err
	}
	fm, err := parseFormat(data)
	if err != nil {
		return branchFormat{}, fmt.Errorf("%s: %w", ref, err)
	}
	return fm, nil
}

// runOutput runs cmd and returns its output, or an error with what git
// said.
func runOutput(cmd *gitexec.Cmd) ([]byte, error) {
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, err
	}
	return []byte(stdout.String()), nil
}

// shardDirs reports whether p is "xx" or "xx/yy", shard directories of
// two lowercase hex digits.
func shardDirs(p string) bool {
	for _, d := range strings.Split(p, "/") {
		if len(d) != 2 || strings.Trim(d, "0123456789abcdef") != "" {
			return false
		}
	}
	return true
}

// readBeside reads the events of the format-2 history at tip from those
// of another ref of this call, prior (a history key), already read: when
// tip reaches prior's tip, only the commits since are read; when prior's
// tip reaches tip, tip adds nothing (subsumed). ok is false when neither
// reaches the other.
func (r *logReader) readBeside(ctx context.Context, ref, tip, prior string, base []journal.Event) (evs []journal.Event, subsumed, ok bool, err error) {
	ptip := strings.TrimPrefix(prior, historyKey)
	if in, err := r.isAncestor(ctx, tip, ptip); err != nil || in {
		if in {
			r.stats.subsumed++
		}
		return nil, in, in, err
	}
	if in, err := r.isAncestor(ctx, ptip, tip); err != nil || !in {
		return nil, false, false, err
	}
	added, err := r.listObjects(ctx, ref, tip, []string{ptip})
	if err != nil {
		return nil, false, false, err
	}
	if len(added) == 0 {
		r.stats.shared++
		return base, false, true, nil
	}
	evs, err = r.readAdded(ref, base, added)
	return evs, false, true, err
}
