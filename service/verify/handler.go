package verify

import (
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/service/session"
)

// Handler verifies on one session: its repository, its policy, its
// clock and its journal.
type Handler struct {
	*session.Workspace
}

// repo is the session's repository, for the git this package runs.
func (e Handler) repo() *gitexec.Repo {
	return &gitexec.Repo{Toplevel: e.WorkTree(), GitDir: e.GitDir(), CommonDir: e.CommonDir()}
}
