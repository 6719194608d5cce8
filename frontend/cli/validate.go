package cli

import (
	"context"
	"fmt"

	"github.com/lockgate/lockgate/service"
)

func validateCommand() *command {
	return &command{
		noStore: true,
		usage:   "validate [FILE...]",
		short:   "check .lockgate.yaml and work-packages.yaml; errors name file:line",
		run: func(ctx context.Context, a *app, args []string) error {
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			v, err := e.Validate(service.ValidateRequest{Files: args})
			for _, f := range v.Valid {
				fmt.Fprintf(a.stdio.Err, "ok: %s\n", f)
			}
			files := append([]string{}, v.Valid...)
			if err != nil {
				a.partial = map[string]any{"ok": false, "files": files, "invalid": v.Invalid}
				return err
			}
			if len(v.Valid) == 0 {
				fmt.Fprintln(a.stdio.Err, "no .lockgate.yaml or work packages file: the built-in defaults apply")
			}
			return a.reply(map[string]any{"ok": true, "files": files, "defaults": len(v.Valid) == 0}, func() {})
		},
	}
}
