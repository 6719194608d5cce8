package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/lockgate/lockgate/service/outcome"

	"github.com/lockgate/lockgate/service"

	"github.com/lockgate/lockgate/internal/safetext"
)

// Pre-edit guards ask, before a file is edited, what the pre-commit hook
// would answer when it is committed: scope and locks, read once. The
// protected-branch rule is left to the commit: editing is not committing.

func guardEditCommand() *command {
	return &command{
		usage: "guard edit PATH...",
		short: "exit 0 when this worker may edit PATH (free or its own, in scope, not paused); 1 with the reason otherwise",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return service.Usagef("guard edit: give at least one PATH")
			}
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			paths := make([]string, 0, len(args))
			for _, p := range args {
				rp, err := e.RepoPath(p, e.Cwd)
				if err != nil {
					return err
				}
				paths = append(paths, rp)
			}
			r, err := e.Evaluate(ctx, a.purpose, "", paths, "")
			if err != nil {
				return err
			}
			r.Hook = "guard"
			return a.finishReport(r, "edit", "")
		},
	}
}

// claudeEditTools are the Claude Code tools that write files.
var claudeEditTools = map[string]bool{"Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true}

// claudeHookInput is the part of a Claude Code PreToolUse payload the guard
// reads.
type claudeHookInput struct {
	HookEventName string `json:"hook_event_name"`
	ToolName      string `json:"tool_name"`
	Cwd           string `json:"cwd"`
	ToolInput     *struct {
		FilePath     *string `json:"file_path"`
		NotebookPath *string `json:"notebook_path"`
	} `json:"tool_input"`
}

// maxHookInput bounds the payload: a Write carries the whole new file.
const maxHookInput = 64 << 20

func guardClaudeCodeCommand() *command {
	return &command{
		usage: "guard claude-code",
		short: "Claude Code PreToolUse hook: reads the payload on stdin; exit 2 blocks the edit with the reason on stderr",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return a.blockEdit(service.Usagef("guard claude-code takes no arguments (the payload comes on stdin)"))
			}
			// The caller is a coding agent unless told otherwise.
			if a.globals.WorkerType == "" && getenv("LOCKGATE_WORKER_TYPE") == "" {
				a.globals.WorkerType = "agent"
			}
			in, err := readClaudePayload(a.stdio.In)
			if err != nil {
				return a.blockEdit(err)
			}
			if !claudeEditTools[in.ToolName] {
				return nil // not an edit: nothing to guard
			}
			path := ""
			if in.ToolInput != nil {
				for _, p := range []*string{in.ToolInput.FilePath, in.ToolInput.NotebookPath} {
					if p != nil && *p != "" {
						path = *p
						break
					}
				}
			}
			if path == "" {
				return a.blockEdit(fmt.Errorf("%s payload has no tool_input.file_path: cannot tell what would be edited", in.ToolName))
			}
			if in.Cwd != "" && a.globals.Dir == "" {
				if !filepath.IsAbs(in.Cwd) {
					return a.blockEdit(fmt.Errorf("payload cwd %q is not absolute", in.Cwd))
				}
				a.globals.Dir = in.Cwd
			}
			e, err := a.load(ctx)
			if err != nil {
				return a.blockEdit(err)
			}
			rp, err := e.RepoPath(path, e.Cwd)
			if err != nil {
				return a.blockEdit(err)
			}
			r, err := e.Evaluate(ctx, a.purpose, "", []string{rp}, "")
			if err != nil {
				return a.blockEdit(err)
			}
			r.Hook = "guard"
			for _, w := range r.Warnings {
				fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s\n", w)
			}
			if r.OK {
				return nil
			}
			a.carryReport(r)
			r.WriteStyled(a.stdio.Err, in.ToolName+" of "+safetext.Field(safetext.Shorten(rp)), a.paintRole)
			return &outcome.ExitError{Code: claudeBlock}
		},
	}
}

// claudeBlock is the exit code with which a Claude Code hook blocks a tool
// call; any other non-zero code lets the call go ahead.
const claudeBlock = 2

// blockEdit refuses an edit the guard could not vouch for: in Claude Code's
// protocol only exit 2 blocks, so every failure must end there.
func (a *app) blockEdit(err error) error {
	fmt.Fprintf(a.stdio.Err, "lockgate: edit blocked: %s\n", safetext.Text(err.Error()))
	detail, hints := a.explain(err)
	if detail != "" {
		a.printHints(detail)
	}
	a.printHints(hints...)
	return &outcome.ExitError{Code: claudeBlock}
}

func readClaudePayload(r io.Reader) (*claudeHookInput, error) {
	if r == nil {
		return nil, errors.New("no hook payload on stdin")
	}
	data, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
	if err != nil {
		return nil, fmt.Errorf("read hook payload: %w", err)
	}
	if len(data) > maxHookInput {
		return nil, fmt.Errorf("hook payload larger than %d bytes", maxHookInput)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty hook payload on stdin: want Claude Code's PreToolUse JSON")
	}
	var in claudeHookInput
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("hook payload is not Claude Code's PreToolUse JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("hook payload has trailing data after the JSON object")
	}
	if in.HookEventName != "" && in.HookEventName != "PreToolUse" {
		return nil, fmt.Errorf("hook_event_name %q: this guard answers PreToolUse", in.HookEventName)
	}
	if in.ToolName == "" {
		return nil, errors.New("hook payload has no tool_name")
	}
	return &in, nil
}
