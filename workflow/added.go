package workflow

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// AddedEvents reads, for each of commits (commits of the workflow branch
// in the repository git finds from dir, in this process's environment, as
// a pre-receive hook must read them), the events it adds: the event files
// of its tree that none of its parents has. A merge that only joins two
// branches' events adds none, nor does the commit that moves a branch to
// format 2 (it holds its parent's events tree as it is). A file that is
// not an event is an error.
func AddedEvents(ctx context.Context, dir string, commits []string) (map[string][]journal.Event, error) {
	out := make(map[string][]journal.Event, len(commits))
	for _, c := range commits {
		if !objectName(c) {
			return nil, fmt.Errorf("events added: %q is not a full object name", c)
		}
		parents, err := gitexec.Output(ctx, dir, nil, "rev-parse", c+"^@")
		if err != nil {
			return nil, fmt.Errorf("events added by %s: %w", shortOID(c), err)
		}
		added, err := addedFiles(ctx, dir, c, strings.Fields(string(parents)))
		if err != nil {
			return nil, err
		}
		var oids []string
		for _, f := range added {
			oids = append(oids, f[1])
		}
		blobs, err := gitexec.ReadBlobsIn(ctx, dir, oids)
		if err != nil {
			return nil, fmt.Errorf("events added by %s: %w", shortOID(c), err)
		}
		for i, b := range blobs {
			ev, err := journal.ParseLine(b)
			if err != nil {
				return nil, fmt.Errorf("events added by %s: %s: %w", shortOID(c), added[i][0], err)
			}
			out[c] = append(out[c], ev)
		}
	}
	return out, nil
}

// addedFiles are the files (path, blob) of commit's tree under events/
// that none of parents has; every file of it for a root commit.
func addedFiles(ctx context.Context, dir, commit string, parents []string) ([][2]string, error) {
	var added map[string]string
	if len(parents) == 0 {
		es, err := gitexec.ListTreeIn(ctx, dir, commit)
		if err != nil {
			return nil, fmt.Errorf("events added by %s: %w", shortOID(commit), err)
		}
		added = map[string]string{}
		for _, e := range es {
			if e.Type == "blob" {
				added[e.Path] = e.OID
			}
		}
	}
	for i, p := range parents {
		out, err := gitexec.Output(ctx, dir, nil, "diff-tree", "-r", "-z", "--no-renames", "--diff-filter=A", p, commit)
		if err != nil {
			return nil, fmt.Errorf("events added by %s: %w", shortOID(commit), err)
		}
		here := map[string]string{}
		f := strings.Split(string(out), "\x00")
		for j := 0; j+1 < len(f); j += 2 {
			meta := strings.Fields(strings.TrimPrefix(f[j], ":")) // :000000 100644 0… <blob> A
			if len(meta) == 5 {
				here[f[j+1]] = meta[3]
			}
		}
		if i == 0 {
			added = here
			continue
		}
		for name := range added {
			if _, ok := here[name]; !ok {
				delete(added, name)
			}
		}
	}
	var files [][2]string
	for name, oid := range added {
		if name == eventsDir+"/"+formatFile {
			continue // format 2's blob: not an event
		}
		if !strings.HasPrefix(name, eventsDir+"/") {
			return nil, fmt.Errorf("events added by %s: %s is not under %s/", shortOID(commit), name, eventsDir)
		}
		files = append(files, [2]string{name, oid})
	}
	return files, nil
}

func shortOID(sha string) string { return sha[:min(len(sha), 12)] }
