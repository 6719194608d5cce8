// Package agentsetup merges lockgate's entries into coding agents'
// project settings and takes them out again: the pre-edit guard each
// harness runs before a tool call (Claude Code, Codex CLI, Gemini CLI,
// Cursor, GitHub Copilot and Goose read it from JSON files; opencode from
// a plugin and Cline from a hook script that lockgate writes whole), the
// MCP server where a harness reads one from the project, and Aider's
// .aider.conf.yml. The user's own entries are never changed, and a file
// lockgate cannot read is left alone with an error.
package agentsetup
