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
			noArgs:     true,
			run: func(ctx context.Context, a *app, _ []string) error {
				e, err := a.workspace(ctx)
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
				// What was restored is reported even when some could not be.
				if jerr := a.reply(res, func() {
					for _, k := range res.Restored {
						fmt.Fprintf(a.stdio.Err, "restored %s\n", k)
					}
					fmt.Fprintf(a.stdio.Err, "session %s: %d restored, %d skipped, in %s\n", res.Session, len(res.Restored), len(res.Skipped), e.StoreLabel())
				}); jerr != nil {
					return jerr
				}
				return err
			},
		},
	}}
}
