package queue

import (
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/service/session"
)

// Handler runs the work queue on one session: its lock store and
// manager, its worker, its clock.
type Handler struct {
	*session.Workspace
}

// repo is the session's repository, for the git this package runs.
func (e *Handler) repo() *gitexec.Repo {
	return &gitexec.Repo{Toplevel: e.WorkTree(), GitDir: e.GitDir(), CommonDir: e.CommonDir()}
}
