package workflow

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/internal/safetext"
)

// commitInfo is what the checks read of one commit: its parents, and its
// format (format 2 when it has a format blob).
type commitInfo struct {
	parents []string
	v2      bool
	fm      branchFormat
	rootOK  bool // format 2: the root holds events/ alone
	oldOK   bool // format 1: the root holds events/ alone
	events  string
}

// readCommitInfos reads parents and format of commits, and the format of
// each parent.
func readCommitInfos(ctx context.Context, r *logReader, commits []string) (map[string]*commitInfo, error) {
	cmd := r.command(ctx, "rev-list", "--no-walk=unsorted", "--parents", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(commits, "\n") + "\n")
	out, err := runOutput(cmd)
	if err != nil {
		return nil, fmt.Errorf("check event commits: read their parents: %w", err)
	}
	infos := map[string]*commitInfo{}
	var all []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		infos[f[0]] = &commitInfo{parents: f[1:]}
		all = append(all, f[0])
	}
	for _, c := range commits {
		if infos[c] == nil {
			return nil, &NotEventsError{Commit: c, Err: errors.New("not a commit")}
		}
	}
	for _, c := range commits {
		for _, p := range infos[c].parents {
			if infos[p] == nil {
				infos[p] = &commitInfo{}
				all = append(all, p)
			}
		}
	}
	err = r.cat.round(func(w *bufio.Writer) error {
		for _, c := range all {
			if _, err := fmt.Fprintf(w, "info %[1]s^{tree}\ninfo %[1]s:%[2]s\ninfo %[1]s:%[2]s/%[3]s\n", c, eventsDir, formatFile); err != nil {
				return err
			}
		}
		return nil
	}, func(br *bufio.Reader) error {
		for _, c := range all {
			var info [3]objectInfo
			for i := range info {
				var err error
				if info[i], err = r.cat.info(br); err != nil {
					return fmt.Errorf("check commit %s: %w", c, err)
				}
			}
			ci := infos[c]
			ci.v2 = !info[2].missing
			// A tree object is "<mode> <name>\0<binary id>" per entry: a
			// root of exactly that size for events/ holds it alone.
			eventsOnly := !info[1].missing && info[1].typ == "tree" &&
				info[0].size == int64(len("40000 "+eventsDir+"\x00")+len(info[0].oid)/2)
			ci.events = info[1].oid
			ci.rootOK = ci.v2 && info[2].typ == "blob" && eventsOnly
			ci.oldOK = !ci.v2 && eventsOnly
		}
		return nil
	})
	if err != nil {
		return nil, r.ctxErr(ctx, err)
	}
	for _, c := range all {
		if ci := infos[c]; ci.v2 && ci.rootOK {
			fm, err := r.formatOf(c, c)
			if err != nil {
				return nil, &NotEventsError{Commit: c, Err: err}
			}
			ci.fm = fm
		}
	}
	return infos, nil
}

// checkFormat2 checks commits of format 2 (infos has them and their
// parents): each root holds events/ alone, with the format blob in it;
// each base the format names is one of its parents' bases or a parent of
// format 1 (whose every event file the commit keeps); and every event
// file it adds or changes against a parent is an event at the path its id
// gives, none an id known (known: by id, the encoded events of the
// branch and of the commits checked before) with other content. A commit
// of format 1 on a parent of format 2 is refused: no lockgate writes one.
func checkFormat2(ctx context.Context, r *logReader, commits []string, infos map[string]*commitInfo, known map[string][]byte) error {
	for _, c := range commits {
		ci := infos[c]
		if !ci.v2 {
			for _, p := range ci.parents {
				if infos[p].v2 {
					return &NotEventsError{Commit: c, Err: fmt.Errorf("%w: a commit without the %s blob on a branch of format 2", errShape, formatFile)}
				}
			}
			continue
		}
		if !ci.rootOK {
			return &NotEventsError{Commit: c, Err: fmt.Errorf("%w: its tree holds more than %s/ (or its %s/%s is not a file)", errShape, eventsDir, eventsDir, formatFile)}
		}
		var want []string
		for _, p := range ci.parents {
			switch pi := infos[p]; {
			case pi.v2:
				want = append(want, pi.fm.bases...)
			case !pi.oldOK:
				return &NotEventsError{Commit: c, Err: fmt.Errorf("%w: its parent %s has no events/ directory of its own: not a commit of the workflow branch", errShape, p)}
			default:
				want = append(want, p)
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		// Fewer bases than its parents make costs a reader a longer walk
		// (an earlier lockgate merging copies one side's blob); a base
		// that is not one of them would hide the history below it.
		for _, b := range ci.fm.bases {
			if _, ok := slices.BinarySearch(want, b); !ok {
				return &NotEventsError{Commit: c, Err: fmt.Errorf("%w: its format names the base %s, which is not one of its parents' bases %v", errShape, b, want)}
			}
		}
		var files []file
		seen := map[file]bool{}
		if len(ci.parents) == 0 && ci.events != "" {
			all, err := r.lsTree(ctx, c, ci.events)
			if err != nil {
				return &NotEventsError{Err: err}
			}
			files = all
		}
		for _, p := range ci.parents {
			changed, err := r.changedEvents(ctx, c, p, !infos[p].v2)
			if err != nil {
				return err
			}
			for _, f := range changed {
				if !seen[f] {
					seen[f] = true
					files = append(files, f)
				}
			}
		}
		evs, err := r.readBlobs(c, files)
		if err != nil {
			if errors.Is(err, errShape) || errors.Is(err, errNotEvent) {
				return &NotEventsError{Err: err}
			}
			return err
		}
		for _, ev := range evs {
			line, err := encodeEvent(ev)
			if err != nil {
				return &NotEventsError{Commit: c, Err: err}
			}
			if was, ok := known[ev.ID]; ok && string(was) != string(line) {
				return &NotEventsError{Err: fmt.Errorf("commit %s changes %s: %w (the event is on the branch with other content)", c, EventPath(ev.ID), errShrinks)}
			}
			known[ev.ID] = line
		}
	}
	return nil
}

// knownEvents returns the encoded events of refs, by id.
func knownEvents(ctx context.Context, cfg Config, refs []string) (map[string][]byte, error) {
	known := map[string][]byte{}
	if len(refs) == 0 {
		return known, nil
	}
	evs, _, err := readEvents(ctx, cfg, refs, &readStats{})
	if err != nil {
		return nil, fmt.Errorf("check event commits: read the branch: %w", err)
	}
	for _, ev := range evs {
		line, err := encodeEvent(ev)
		if err != nil {
			return nil, err
		}
		known[ev.ID] = line
	}
	return known, nil
}

// changedEvents lists the event files commit adds or changes against
// parent; with keep (a parent of format 1), a file it deletes or changes
// is a *NotEventsError: the commit that moves a branch to format 2 keeps
// every event of it.
func (r *logReader) changedEvents(ctx context.Context, commit, parent string, keep bool) ([]file, error) {
	out, err := r.git(ctx, "diff-tree", "-r", "-z", "--no-renames", parent, commit, "--", eventsDir)
	if err != nil {
		return nil, fmt.Errorf("check event commits: %w", err)
	}
	var files []file
	rest := string(out)
	for rest != "" {
		var meta, path string
		meta, rest, _ = strings.Cut(rest, "\x00")
		path, rest, _ = strings.Cut(rest, "\x00")
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(f) != 5 {
			return nil, fmt.Errorf("check event commits: git diff-tree: unexpected output %q", meta)
		}
		switch {
		case f[4] == "D" && !keep:
			continue
		case f[4] != "A" && keep:
			return nil, &NotEventsError{Err: fmt.Errorf("commit %s %s %s: %w", commit, map[bool]string{true: "deletes", false: "changes"}[f[4] == "D"], safetext.Field(path), errShrinks)}
		}
		rel := strings.TrimPrefix(path, eventsDir+"/")
		if rel == formatFile {
			continue // the format blob: checked with the commit
		}
		if err := checkFile(commit, rel, f[1], "blob"); err != nil {
			return nil, &NotEventsError{Err: err}
		}
		files = append(files, file{path: rel, blob: f[3]})
	}
	return files, nil
}
