package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

func storeCommand() *command {
	var unset bool
	return &command{usage: "store <command>", short: "which lock store this clone uses (show, use)", sub: map[string]*command{
		"show": {
			usage: "store show [--json]",
			short: "the lock store this clone uses, and where that choice comes from",
			run: func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return service.Usagef("store show takes no arguments")
				}
				return a.showStore(ctx)
			},
		},
		"use": {
			usage: "store use file|git|redis|redis://… | store use --unset",
			short: "make a store this clone's (git config lockgate.store): every command and hook of every worktree uses it",
			flags: func(fs *pflag.FlagSet) {
				fs.BoolVar(&unset, "unset", false, "forget this clone's choice: follow locks.store of .lockgate.yaml")
			},
			run: func(ctx context.Context, a *app, args []string) error {
				switch {
				case unset && len(args) > 0:
					return service.Usagef("store use: give a store or --unset, not both")
				case !unset && len(args) != 1:
					return service.Usagef("store use: give one store: file, git, redis or a redis:// URL (or --unset)")
				case a.globals.Store != "":
					return service.Usagef("store use: give the store as the argument, without --store")
				}
				spec := ""
				if !unset {
					spec = args[0]
				}
				return a.useStore(ctx, spec)
			},
		},
	}}
}

func (a *app) showStore(ctx context.Context) error {
	e, err := a.load(ctx)
	if err != nil {
		return err
	}
	r, err := e.ShowStore(ctx)
	if err != nil {
		return err
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, r)
	}
	fmt.Fprintf(a.stdio.Out, "store:  %s\nfrom:   %s\n", r.Store.Store, r.Store.SourceText)
	if r.Store.Kind == service.KindRedis {
		fmt.Fprintf(a.stdio.Out, "prefix: %s (%s)\n", r.Prefix, r.PrefixFrom)
	}
	if g := r.Git; g != nil {
		remote := g.Remote
		if g.URL != "" && g.URL != g.Remote {
			remote += " (" + g.URL + ")"
		}
		fmt.Fprintf(a.stdio.Out, "remote: %s\nref:    %s\n", remote, g.Ref)
	}
	if r.Store.ID != r.Clone.ID {
		fmt.Fprintf(a.stdio.Out, "hooks:  %s (%s)\n", r.Clone.Store, r.Clone.SourceText)
	}
	if r.Policy != nil && r.Store.Source != service.FromPolicy {
		fmt.Fprintf(a.stdio.Out, "policy: %s (%s)\n", r.Policy.Store, r.Policy.SourceText)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s\n", w)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(a.stdio.Err, "lockgate: note: %s\n", n)
	}
	return nil
}

// useStore records spec as the clone's store ("" forgets it), after
// checking that the store opens, and logs a store_use event.
func (a *app) useStore(ctx context.Context, spec string) error {
	e, err := a.load(ctx)
	if err != nil {
		return err
	}
	r, err := e.UseStore(ctx, spec)
	if err != nil {
		return err
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, r)
	}
	if spec == "" {
		fmt.Fprintf(a.stdio.Err, "this clone follows %s again: %s\n", r.Store.SourceText, r.Store.Label)
	} else {
		fmt.Fprintf(a.stdio.Err, "this clone now locks in %s (%s): every command and hook of its worktrees uses it\n", r.Store.Label, r.Store.SourceText)
		if r.Prefix != "" {
			fmt.Fprintf(a.stdio.Err, "Redis key prefix: %s (%s)\n", r.Prefix, service.ClonePrefixKey)
		}
	}
	return nil
}
