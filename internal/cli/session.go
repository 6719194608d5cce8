package cli

import (
	"context"
	"fmt"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/lockgate/lockgate/locks/lockkey"
	"github.com/lockgate/lockgate/locks/redisstore"
)

func sessionCommand() *command {
	return &command{usage: "session <command>", sub: map[string]*command{
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
				if e.Redis == nil {
					return service.Usagef("session restore needs the Redis store (`lockgate store use redis://…`); the file store keeps locks on disk across restarts")
				}
				opts := e.KeyOptions()
				canon := func(k string) (string, error) { return lockkey.Canonical(k, opts) }
				res, err := e.Redis.Restore(ctx, e.Me.Session, redisstore.AcquireWith(e.Mgr, e.Me, canon))
				for _, s := range res.Skipped {
					fmt.Fprintf(a.stdio.Err, "lockgate: warning: not restored: %s: %s\n", s.Key, s.Reason)
				}
				if a.globals.JSON {
					if res.Restored == nil {
						res.Restored = []string{}
					}
					if res.Skipped == nil {
						res.Skipped = []redisstore.Skip{}
					}
					if jerr := writeJSON(a.stdio.Out, res); jerr != nil {
						return jerr
					}
				} else {
					for _, k := range res.Restored {
						fmt.Fprintf(a.stdio.Err, "restored %s\n", k)
					}
					fmt.Fprintf(a.stdio.Err, "session %s: %d restored, %d skipped, in %s\n", e.Me.Session, len(res.Restored), len(res.Skipped), e.StoreLabel())
				}
				return err
			},
		},
	}}
}
