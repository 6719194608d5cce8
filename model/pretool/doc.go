// Package pretool reads the payloads coding-agent harnesses hand their
// pre-tool hooks — Claude Code, Codex CLI, Gemini CLI, opencode (through
// the plugin lockgate installs), Cursor, GitHub Copilot, Cline and Goose —
// and says which files the tool call would write, and the shell command
// it would run. It also renders the answer each harness understands
// (Reply) and finds the files a shell command names as write targets
// (ShellWrites).
//
// It is pure: it reads only the bytes it is given. Deciding whether a
// write may happen is the pre-commit checks' job (service.CheckPaths).
//
// A payload that is not the harness's, is truncated, or names a writing
// tool without the file it writes is an error: the guard cannot vouch for
// it, and denies. A tool that writes no file (a read, a search) comes back
// with no Writes and no Shell, and passes.
package pretool
