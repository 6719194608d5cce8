// Package hint is every hint lockgate prints: the lines that tell a user
// (or a coding agent) what to do about a refusal, usually as a command to
// paste. They live in one table so that each command in them can be tested
// by running it (see cmd/lockgate's hint tests): a hint that names a flag
// or a command that does not work is worse than none.
package hint
