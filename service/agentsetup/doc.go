// Package agentsetup merges lockgate's entries into a coding agent's
// settings files and takes them out again: for Claude Code, the pre-edit
// guard in .claude/settings.json and the MCP server in .mcp.json. The
// user's own entries are never changed, and a file lockgate cannot read as
// a JSON object is left alone with an error.
package agentsetup
