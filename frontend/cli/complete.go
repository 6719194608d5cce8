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

// completeHeld completes the keys of the locks this worker holds.
func (a *app) completeHeld(ctx context.Context) cobra.CompletionFunc {
	return a.completeWith(ctx, service.HeldKeys, a.open)
}

// completePackages completes work package ids.
func (a *app) completePackages(ctx context.Context) cobra.CompletionFunc {
	return a.completeWith(ctx, service.PackageIDs, a.load)
}

// completeProfiles completes the scope profiles of the policy.
func (a *app) completeProfiles(ctx context.Context) cobra.CompletionFunc {
	return a.completeWith(ctx, service.ScopeProfiles, a.load)
}

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

// addCompletions attaches the completions of the command at path.
func (a *app) addCompletions(ctx context.Context, path string, cc *cobra.Command) {
	switch path {
	case "lock release", "lock refresh":
		cc.ValidArgsFunction = a.completeHeld(ctx)
	case "claim", "done", "release-package", "retry":
		cc.ValidArgsFunction = a.completePackages(ctx)
	}
	if cc.Flags().Lookup("package") != nil {
		_ = cc.RegisterFlagCompletionFunc("package", a.completePackages(ctx))
	}
	if cc.Flags().Lookup("profile") != nil {
		_ = cc.RegisterFlagCompletionFunc("profile", a.completeProfiles(ctx))
	}
}
