package cli

import (
	"fmt"

	"github.com/lockgate/lockgate/service"
)

// setupAgent writes agent's settings in the worktree at root and says what
// it did with each entry.
func (a *app) setupAgent(root, agent string) error {
	steps, err := service.SetupAgent(root, agent)
	for _, s := range steps {
		fmt.Fprintf(a.stdio.Err, "%s: %s %s\n", s.Path, s.What, map[bool]string{true: "added", false: "already there"}[s.Changed])
	}
	return err
}

// removeAgent takes lockgate's entries out of agent's settings.
func (a *app) removeAgent(root, agent string) error {
	steps, err := service.RemoveAgent(root, agent)
	for _, s := range steps {
		fmt.Fprintf(a.stdio.Err, "%s: %s removed\n", s.Path, s.What)
	}
	return err
}
