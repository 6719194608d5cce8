// Package mcpserver serves lockgate's lock API to coding agents as MCP
// tools over stdio: acquire_lock, release_lock, check_locks, claim_package,
// allocate_ports, check_change and the others (docs/agents.md: The MCP server). It
// is a front end only: each tool decodes its arguments, calls the service
// and encodes the result, and a refusal carries the same classification as
// the CLI's exit code (service/outcome).
package mcpserver
