// Package outcome is the one table that says what an error means to the
// people and programs lockgate answers: the CLI's exit code, the MCP
// server's error class and reason, the lock that stands in the way, and
// the hint lines that resolve it (docs/exit-codes.md). Both front ends
// classify every error they report through Of, so the two never disagree.
package outcome
