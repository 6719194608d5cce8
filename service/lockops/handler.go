package lockops

import (
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/service/verify"
)

// Handler runs lock requests on one session: its lock store and manager,
// its worker, its policy, its clock.
type Handler struct {
	*session.Workspace
}

// repo is the session's repository, for the git this package runs.
func (e *Handler) repo() *gitexec.Repo {
	return &gitexec.Repo{Toplevel: e.WorkTree(), GitDir: e.GitDir(), CommonDir: e.CommonDir()}
}

// queue is the session's work queue, whose packages a lock request may
// name (`lock acquire --package`).
func (e *Handler) queue() *queue.Handler { return &queue.Handler{Workspace: e.Workspace} }

// verifier reads the session's commits as verify does (ranges, branches).
func (e *Handler) verifier() verify.Handler { return verify.Handler{Workspace: e.Workspace} }
