package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// branchEventLines returns the journal line of every event on the workflow
// branch ref in the clone dir, with git alone: the event files of every
// commit the ref reaches (the branch's events are those of its history),
// each once, and keep filters the lines (nil: all).
func branchEventLines(ctx context.Context, dir string, env []string, ref string, keep func(line string) bool) ([]string, error) {
	list := exec.CommandContext(ctx, "git", "rev-list", "--objects", ref)
	list.Dir, list.Env = dir, env
	out, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("git rev-list --objects %s: %w", ref, err)
	}
	var oids []string
	for line := range strings.Lines(string(out)) {
		oid, path, _ := strings.Cut(strings.TrimSpace(line), " ")
		if strings.HasPrefix(path, "events/") && strings.HasSuffix(path, ".json") {
			oids = append(oids, oid)
		}
	}
	cat := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cat.Dir, cat.Env = dir, env
	cat.Stdin = strings.NewReader(strings.Join(oids, "\n") + "\n")
	blobs, err := cat.Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file --batch: %w", err)
	}
	var lines []string
	seen := map[string]bool{}
	br := bufio.NewReader(strings.NewReader(string(blobs)))
	for range oids {
		var oid, typ string
		var size int
		if _, err := fmt.Fscanf(br, "%s %s %d\n", &oid, &typ, &size); err != nil {
			return nil, fmt.Errorf("git cat-file --batch: %w", err)
		}
		b := make([]byte, size+1)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("git cat-file --batch: %w", err)
		}
		line := strings.TrimSpace(string(b[:size]))
		if !seen[line] && (keep == nil || keep(line)) {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	return lines, nil
}
