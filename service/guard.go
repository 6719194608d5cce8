package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lockgate/lockgate/diffpath"
	"github.com/lockgate/lockgate/model/pretool"
	"github.com/lockgate/lockgate/service/session"
)

// ToolCall is what a coding harness's pre-tool hook asks about: the files
// a tool call would write and the shell command it would run.
type ToolCall = pretool.Call

// GuardReply is the guard's answer in a harness's convention.
type GuardReply = pretool.Reply

// Harnesses are the coding harnesses `lockgate guard NAME` answers.
var Harnesses = pretool.Harnesses

// ReadToolCall reads harness's pre-tool payload from r. A payload lockgate
// cannot read is an error: the guard denies it.
func ReadToolCall(harness string, r io.Reader) (*ToolCall, error) {
	if r == nil {
		return nil, errors.New("no hook payload on stdin")
	}
	data, err := io.ReadAll(io.LimitReader(r, pretool.MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read hook payload: %w", err)
	}
	return pretool.Parse(harness, data)
}

// GuardAnswer renders a decision in harness's convention: allow, or deny
// with the reason the model reads.
func GuardAnswer(harness string, deny bool, reason string) GuardReply {
	return pretool.Answer(harness, deny, reason)
}

// maxShellPatch bounds a patch file `git apply` is given in a shell
// command that the guard reads.
const maxShellPatch = 64 << 20

// GuardToolCall judges the files call would write, as the pre-commit hook
// would judge committing them (CheckPaths): the tool's own files, and the
// files its shell command names as write targets (pretool.ShellWrites)
// inside this worktree — those outside it are not lockgate's. The
// workspace runs in the call's working directory.
func (e *Workspace) GuardToolCall(ctx context.Context, call *ToolCall) (*PathCheckResult, error) {
	paths := append([]string(nil), call.Writes...)
	if call.Shell != "" {
		more, err := e.shellTargets(call)
		if err != nil {
			return nil, err
		}
		paths = append(paths, more...)
	}
	if len(paths) == 0 {
		r := &Report{Hook: "guard"}
		r.Finish()
		return &PathCheckResult{Report: r}, nil
	}
	return e.CheckPaths(ctx, PathCheck{Paths: dedupe(paths)})
}

// shellTargets are the files call's shell command writes in this worktree,
// absolute.
func (e *Workspace) shellTargets(call *ToolCall) ([]string, error) {
	start := e.Cwd
	if call.ShellDir != "" {
		start = resolveFrom(e.Cwd, call.ShellDir)
	}
	var out []string
	for _, t := range pretool.ShellWrites(call.Shell) {
		p := resolveFrom(resolveFrom(start, t.Dir), t.Path)
		if !t.Patch {
			if _, inside := e.InWorktree(p); inside || e.inGitDir(p) {
				out = append(out, p)
			} // else /tmp, another repository: not this worktree's files
			continue
		}
		// A patch file may be anywhere: the files it changes are here.
		files, err := e.patchFiles(p)
		if err != nil {
			return nil, fmt.Errorf("%s: `git apply %s`: %w", call.Tool, t.Path, err)
		}
		out = append(out, files...)
	}
	return out, nil
}

// patchFiles are the files a patch file for `git apply` changes: paths of
// the worktree's top, as git apply reads them.
func (e *Workspace) patchFiles(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("cannot tell what it writes: %w", err)
	}
	defer f.Close()
	changes, err := diffpath.ParsePatch(io.LimitReader(f, maxShellPatch))
	if err != nil {
		return nil, fmt.Errorf("cannot tell what it writes: %w", err)
	}
	var out []string
	for _, c := range changes {
		for _, p := range c.Touched() {
			out = append(out, filepath.Join(e.WorkTree(), filepath.FromSlash(p)))
		}
	}
	return out, nil
}

// inGitDir reports whether abs is inside the worktree's .git: a shell
// write there (a hook, the config) is refused, not ignored.
func (e *Workspace) inGitDir(abs string) bool {
	if e.WorkTree() == "" {
		return false
	}
	rel, err := filepath.Rel(e.WorkTree(), abs)
	return err == nil && session.IsGitPath(filepath.ToSlash(rel))
}

// resolveFrom is p against dir, unless p is absolute.
func resolveFrom(dir, p string) string {
	if p == "" {
		return dir
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

func dedupe(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// DescribeCall names what call would do to paths (repo-relative), as a
// refusal's first line says it.
func DescribeCall(call *ToolCall, paths []string) string {
	switch len(paths) {
	case 0:
		return call.Tool
	case 1:
		return call.Tool + " of " + paths[0]
	}
	return fmt.Sprintf("%s of %s and %d more", call.Tool, paths[0], len(paths)-1)
}
