package cli

import (
	"cmp"
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

func storeCommand() *command {
	var unset bool
	return &command{usage: "store <command>", short: "which lock store this clone uses (show, use)", sub: map[string]*command{
		"show": {
			noArgs:  true,
			noStore: true,
			usage:   "store show [--json]",
			short:   "the lock store this clone uses, and where that choice comes from",
			run: func(ctx context.Context, a *app, _ []string) error {
				return run(ctx, a, func(e *service.Workspace) (*service.StoreReport, error) { return e.ShowStore(ctx) }, a.showStore)
			},
		},
		"use": {
			noStore: true,
			usage:   "store use file|git|redis|redis://… | store use --unset",
			short:   "make a store this clone's (git config lockgate.store): every command and hook of every worktree uses it",
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
				var req service.UseRequest
				if !unset {
					req.Store = args[0]
				}
				return run(ctx, a, func(e *service.Workspace) (*service.UseResult, error) { return e.UseStore(ctx, req) },
					func(_ *service.Workspace, r *service.UseResult) error {
						return a.reply(r, func() { a.usedStore(req, r) })
					})
			},
		},
	}}
}

// showStore prints how the store is picked, and what is wrong with it.
func (a *app) showStore(_ *service.Workspace, r *service.StoreReport) error {
	return a.reply(r, func() {
		fmt.Fprintf(a.stdio.Out, "store:  %s\nfrom:   %s\n", r.Store.Store, r.Store.SourceText)
		if r.Store.Kind == service.KindRedis {
			// The keys' prefix, braces and all on a cluster: what a
			// look at the server's keys finds.
			fmt.Fprintf(a.stdio.Out, "prefix: %s (%s)\n", cmp.Or(r.KeyPrefix, r.Prefix), r.PrefixFrom)
		}
		if rp := r.Replicas; rp != nil && rp.Connected >= 0 {
			fmt.Fprintf(a.stdio.Out, "replicas: %d connected (locks.redis.min_replicas: %d)\n", rp.Connected, rp.Min)
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
	})
}

// usedStore says which store the clone now locks in.
func (a *app) usedStore(req service.UseRequest, r *service.UseResult) {
	switch {
	case req.Store == "" && r.Policy != nil:
		// The clone may have recorded the policy's store again (a Redis
		// or git store is pinned): what it follows is the policy.
		fmt.Fprintf(a.stdio.Err, "this clone follows %s again: %s\n", r.Policy.SourceText, r.Policy.Label)
		return
	case req.Store == "":
		fmt.Fprintf(a.stdio.Err, "this clone no longer chooses a store: it locks in %s, as neither %s nor locks.store names one\n", r.Store.Label, service.CloneStoreKey)
		return
	}
	fmt.Fprintf(a.stdio.Err, "this clone now locks in %s (%s): every command and hook of its worktrees uses it\n", r.Store.Label, r.Store.SourceText)
	if r.Prefix != "" {
		fmt.Fprintf(a.stdio.Err, "Redis key prefix: %s (%s)\n", r.Prefix, service.ClonePrefixKey)
	}
}
