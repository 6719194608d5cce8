package cli

import (
	"context"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// Shell completion beyond commands and flags: the keys this worker holds
// (release, refresh), work package ids (claim, --package) and scope
// profiles (--profile). Completion must never fail loudly: what cannot be
// read completes to nothing.

// completeHeld completes the keys of the locks this worker holds.
func (a *app) completeHeld(ctx context.Context) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		e, err := a.open(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		entries, err := e.Store.List(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var keys []string
		for _, en := range entries {
			if en.Err == nil && en.OwnedBy(e.Me) && strings.HasPrefix(en.Key, toComplete) {
				keys = append(keys, en.Key)
			}
		}
		return keys, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePackages completes work package ids.
func (a *app) completePackages(ctx context.Context) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		e, err := a.load(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		wps, err := e.LoadPackages("")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ids []string
		for _, wp := range wps.Packages {
			if strings.HasPrefix(wp.ID, toComplete) {
				ids = append(ids, wp.ID)
			}
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeProfiles completes the scope profiles of the policy.
func (a *app) completeProfiles(ctx context.Context) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		e, err := a.load(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for name := range e.Cfg.Scope.Profiles {
			if strings.HasPrefix(name, toComplete) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		return names, cobra.ShellCompDirectiveNoFileComp
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
