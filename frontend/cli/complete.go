package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/lockgate/lockgate/service"
)

// Shell completion beyond commands and flags: the keys this worker holds
// (release, refresh), work package ids (claim, --package) and scope
// profiles (--profile). Completion must never fail loudly: what cannot be
// read completes to nothing.

// completeWith completes the candidates of kind "of" of the workspace open
// gives (loaded, or with its lock store open).
func (a *app) completeWith(ctx context.Context, of service.CandidateKind, open func(context.Context) (*service.Workspace, error)) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		e, err := open(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out, err := e.Candidates(ctx, service.CandidatesRequest{Of: of, Prefix: toComplete})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// addCompletions attaches the completions of the command at path: held
// keys need the lock store, package ids and profiles only the workspace.
func (a *app) addCompletions(ctx context.Context, path string, cc *cobra.Command) {
	packages := a.completeWith(ctx, service.PackageIDs, a.load)
	switch path {
	case "lock release", "lock refresh":
		cc.ValidArgsFunction = a.completeWith(ctx, service.HeldKeys, a.open)
	case "claim", "done", "release-package", "retry":
		cc.ValidArgsFunction = packages
	}
	if cc.Flags().Lookup("package") != nil {
		_ = cc.RegisterFlagCompletionFunc("package", packages)
	}
	if cc.Flags().Lookup("profile") != nil {
		_ = cc.RegisterFlagCompletionFunc("profile", a.completeWith(ctx, service.ScopeProfiles, a.load))
	}
}
