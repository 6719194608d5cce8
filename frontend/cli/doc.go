// Package cli is lockgate's command-line front end: the command tree (on
// cobra: help, completion, suggestions), the global options and each
// command's flags, and the rendering of what comes back — text, tables,
// --json, hint lines that carry the user's options. A command parses its
// arguments, makes one request of the service (run opens the workspace
// for it) and renders the result; Main prints an error with its hints and
// takes the exit code from service/outcome. It also starts the MCP front
// end (`lockgate mcp`), and runs git's hook contracts and the coding
// agents' pre-edit guards.
package cli
