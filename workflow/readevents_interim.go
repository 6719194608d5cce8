package workflow

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/locks/journal"
)

// ReadEvents returns the union, by event id, of the events on refs,
// sorted by timestamp, then id. Refs that do not exist are skipped; found
// lists those that did.
func ReadEvents(ctx context.Context, cfg Config, refs []string) (evs []journal.Event, found []string, err error) {
	dir := cfg.WorkTree
	if dir == "" {
		dir = cfg.GitDir
	}
	seen := map[string]bool{}
	for _, ref := range refs {
		if _, err := gitexec.Output(ctx, dir, nil, "rev-parse", "--verify", "-q", ref+"^{commit}"); err != nil {
			continue
		}
		found = append(found, ref)
		out, err := gitexec.Output(ctx, dir, nil, "ls-tree", "-r", "-z", ref, "--", "events/")
		if err != nil {
			return nil, nil, err
		}
		var ids, paths []string
		for _, ent := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			if ent == "" {
				continue
			}
			meta, path, _ := strings.Cut(ent, "\t")
			f := strings.Fields(meta)
			if len(f) != 3 || f[1] != "blob" {
				return nil, nil, fmt.Errorf("%s: %s: not an event file", ref, path)
			}
			ids, paths = append(ids, f[2]), append(paths, path)
		}
		cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
		raw, err := cmd.Output()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: git cat-file: %w", ref, err)
		}
		br := bufio.NewReader(bytes.NewReader(raw))
		for i := range ids {
			hdr, err := br.ReadString('\n')
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", ref, paths[i], err)
			}
			f := strings.Fields(hdr)
			if len(f) != 3 {
				return nil, nil, fmt.Errorf("%s: %s: %q", ref, paths[i], hdr)
			}
			n, _ := strconv.Atoi(f[2])
			b := make([]byte, n+1)
			if _, err := io.ReadFull(br, b); err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", ref, paths[i], err)
			}
			ev, err := journal.ParseLine(b[:n])
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: not an event: %w", ref, paths[i], err)
			}
			if !seen[ev.ID] {
				seen[ev.ID] = true
				evs = append(evs, ev)
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].Timestamp.Equal(evs[j].Timestamp) {
			return evs[i].Timestamp.Before(evs[j].Timestamp)
		}
		return evs[i].ID < evs[j].ID
	})
	return evs, found, nil
}
