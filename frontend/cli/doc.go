// Package cli wires lockgate's front ends — the commands, the MCP server
// for coding agents (`lockgate mcp`) and the pre-edit guards — to one
// implementation: flag sets, options structs, tool schemas, output
// rendering, and the one place where errors become exit codes (and MCP
// error classes). Everything it decides is delegated to the workflow,
// scope and hooks packages.
package cli
