package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockgate/lockgate/service"
)

func sessionCommand() *command {
	return &command{usage: "session <command>", short: "this session's locks (restore them on the Redis store)", sub: map[string]*command{
		"restore": {
			takesLocks: true,
			usage:      "session restore",
			short:      "Redis: re-acquire this session's persisted locks; skip (and say why) what cannot be",
			run: func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return service.Usagef("session restore takes no arguments")
				}
				e, err := a.open(ctx)
				if err != nil {
					return err
				}
				res, err := e.RestoreSession(ctx)
				var usage *service.UsageError
				if errors.As(err, &usage) {
					return err
				}
				for _, s := range res.Skipped {
					fmt.Fprintf(a.stdio.Err, "lockgate: warning: not restored: %s: %s\n", s.Key, s.Reason)
				}
				if a.globals.JSON {
					if jerr := writeJSON(a.stdio.Out, res); jerr != nil {
						return jerr
					}
				} else {
					for _, k := range res.Restored {
						fmt.Fprintf(a.stdio.Err, "restored %s\n", k)
					}
					fmt.Fprintf(a.stdio.Err, "session %s: %d restored, %d skipped, in %s\n", res.Session, len(res.Restored), len(res.Skipped), e.StoreLabel())
				}
				return err
			},
		},
	}}
}
