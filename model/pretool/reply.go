package pretool

import (
	"encoding/json"
)

// Reply is the guard's answer in a harness's convention: what to print on
// stdout and stderr, and the exit code.
type Reply struct {
	Stdout string
	Stderr string
	Exit   int
}

// Answer renders the guard's decision for harness: allow, or deny with
// reason (the refusal as the model should read it: who holds what until
// when, and the command that resolves it).
//
//   - Claude Code, Codex, opencode (lockgate's plugin): exit 2 with the
//     reason on stderr denies; allow is exit 0 and nothing printed (Codex
//     takes a printed "allow" without new input for a failed hook).
//   - Gemini CLI: exit 2, and {"decision":"deny","reason"} on stdout,
//     which Gemini reads before stderr.
//   - Goose: exit 2 with the reason on stderr, {"decision":"block",
//     "reason"} on stdout; allow prints nothing (with on_failure: block,
//     `{}` would count as no decision and block).
//   - Cursor: exit 0 with {"permission":"deny","user_message",
//     "agent_message"} (the model has been seen reading user_message), or
//     {"permission":"allow"}, which failClosed needs.
//   - Copilot: exit 0 with {"permissionDecision":"deny",
//     "permissionDecisionReason"}; allow prints nothing.
//   - Cline: {"cancel":true,"errorMessage"} or {"cancel":false}. Cline
//     ends the whole task on a cancel: the reason says so.
func Answer(harness string, deny bool, reason string) Reply {
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return "{}" // a map of strings always encodes
		}
		return string(b) + "\n"
	}
	line := reason
	if line != "" && line[len(line)-1] != '\n' {
		line += "\n"
	}
	switch harness {
	case "cursor":
		if !deny {
			return Reply{Stdout: js(map[string]string{"permission": "allow"})}
		}
		return Reply{Stdout: js(map[string]string{"permission": "deny", "user_message": reason, "agent_message": reason})}
	case "copilot":
		if !deny {
			return Reply{}
		}
		return Reply{Stdout: js(map[string]string{"permissionDecision": "deny", "permissionDecisionReason": reason})}
	case "cline":
		if !deny {
			return Reply{Stdout: js(map[string]bool{"cancel": false})}
		}
		return Reply{Stdout: js(map[string]any{"cancel": true, "errorMessage": reason})}
	case "gemini":
		if !deny {
			return Reply{}
		}
		return Reply{Stdout: js(map[string]string{"decision": "deny", "reason": reason}), Stderr: line, Exit: 2}
	case "goose":
		if !deny {
			return Reply{}
		}
		return Reply{Stdout: js(map[string]string{"decision": "block", "reason": reason}), Stderr: line, Exit: 2}
	}
	if !deny {
		return Reply{}
	}
	if line == "" {
		line = "lockgate: edit blocked\n" // Codex lets an empty reason through
	}
	return Reply{Stderr: line, Exit: 2}
}
