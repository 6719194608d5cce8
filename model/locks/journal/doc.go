// Package journal is lockgate's append-only event log (docs/formats.md): one JSON
// object per line in `<git-common-dir>/lockgate/events.jsonl`, shared by all
// worktrees of a clone and later committed to the workflow branch.
//
// Appending is safe across processes and costs the same whatever the size of
// the file: each Append encodes its events up front and writes them with one
// write(2) on an O_APPEND descriptor, under an exclusive flock(2) (for file
// systems where O_APPEND alone is not atomic), then syncs the data. It never
// reads the file, except for its last byte: a line torn by a crash is closed
// with a newline first so that it cannot swallow the next event.
//
// Scan and Read are strict: a line that is not a complete event is reported
// with its line number as a *CorruptLineError. ReadSkipping goes on past
// such lines and returns them beside the events, so that one damaged line
// never hides the rest; it never skips one silently either.
package journal
