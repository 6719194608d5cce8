// Package history rebuilds, from the events of the lock log (the workflow
// branch and the journal), the span during which each lock grant was live,
// and answers which grants covered a key while a commit was made.
// `lockgate verify` judges commits against it; docs/verify.md gives the
// rules and docs/formats.md what the events carry.
package history
