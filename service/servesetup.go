package service

import (
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/scope"
)

// WorkerSetup is the shell line that makes a person's lockgate (the
// hooks, the CLI) act as serve user u: a lock u takes through the server
// is held by the worker named u, and the person's own commits are judged
// as the worker LOCKGATE_WORKER names (else USER@HOST, another worker, to
// which u's locks are someone else's). lockgate keeps no per-clone
// identity setting, so the line goes into the person's shell profile.
func WorkerSetup(u ServeUser) string {
	line := "export LOCKGATE_WORKER=" + hint.Quote(u.Name)
	if u.Type == scope.WorkerAgent {
		line += " LOCKGATE_WORKER_TYPE=" + scope.WorkerAgent
	}
	return line
}
