package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
)

func packagesCommand() *command {
	var file string
	return &command{
		usage: "packages [--packages FILE] [--json]",
		short: "the work queue: every package with its state, holder, time left and what it waits for",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &file)
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("packages: takes no arguments")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			q, err := e.ListPackages(ctx, file)
			if err != nil {
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, map[string]any{"path": q.Path, "packages": q.Packages, "counts": q.Counts,
					"drained": q.Drained(), "store": e.StoreName()})
			}
			rows := [][]string{{"PACKAGE", "STATE", "PRIORITY", "HOLDER", "LEFT", "WAITS FOR", "TITLE"}}
			for _, s := range q.Packages {
				rows = append(rows, []string{s.ID, stateText(s), fmt.Sprint(s.Priority), dash(s.Holder), left(s, q.Now), waitsText(s), dash(s.Title)})
			}
			table(a.stdio.Out, rows)
			unreadable := 0
			for _, s := range q.Packages {
				if s.Unreadable == "" {
					continue
				}
				unreadable++
				fmt.Fprintf(a.stdio.Err, "lockgate: %s: its task record is unreadable: %s\n", safetext.Field(s.ID), safetext.Field(s.Unreadable))
				if h, ok := q.Hints[s.ID]; ok {
					a.printHints(a.carry([]string{h})...)
				}
			}
			note := ""
			if unreadable > 0 {
				note = fmt.Sprintf(", %d unreadable", unreadable)
			}
			fmt.Fprintf(a.stdio.Err, "%d packages in %s: %d ready, %d claimed, %d done, %d failed%s\n", len(q.Packages), q.Path,
				q.Counts[service.PackageReady], q.Counts[service.PackageClaimed]-unreadable, q.Counts[service.PackageDone], q.Counts[service.PackageFailed], note)
			return nil
		},
	}
}

func stateText(s service.PackageStatus) string {
	switch {
	case s.Unreadable != "":
		return "unreadable"
	case s.Expired:
		return "ready (claim expired)"
	}
	return string(s.State)
}

func left(s service.PackageStatus, now time.Time) string {
	if s.State == service.PackageClaimed && s.Until != nil {
		return duration.Until(*s.Until, now)
	}
	if s.FinishedAt != nil {
		return stamp(*s.FinishedAt)
	}
	return "-"
}

func waitsText(s service.PackageStatus) string {
	w := append([]string(nil), s.WaitsFor...)
	for _, l := range s.HeldBy {
		w = append(w, safetext.Field(l.Key)+" ("+safetext.Field(l.Holder)+")")
	}
	if s.Reason != "" {
		w = append(w, "failed: "+safetext.Field(s.Reason))
	}
	if len(w) == 0 {
		return "-"
	}
	return strings.Join(w, ", ")
}

func releasePackageCommand() *command {
	var packages string
	return &command{
		usage: "release-package WP [--packages FILE]",
		short: "give a claimed work package back: release its locks, and it is ready again",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &packages)
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("release-package: give exactly one work package id")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := e.ReleasePackage(ctx, service.PackageRequest{Packages: packages, ID: args[0]})
			for _, k := range res.Kept {
				fmt.Fprintf(a.stdio.Err, "kept %s: %s\n", safetext.Field(k.Key), k.Why)
			}
			a.reportRelease(e, res.ReleaseResult, err)
			return err
		},
	}
}

func retryCommand() *command {
	var packages string
	var force bool
	return &command{
		usage: "retry WP [--force] [--packages FILE]",
		short: "make a failed work package ready again (a done one with --force; logged)",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &packages)
			fs.BoolVar(&force, "force", false, "reset a done package too")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("retry: give exactly one work package id")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			was, err := e.RetryPackage(ctx, service.RetryRequest{PackageRequest: service.PackageRequest{Packages: packages, ID: args[0]}, Force: force})
			if err != nil {
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, map[string]any{"package": args[0], "was": was.Was, "by": was.By, "store": e.StoreName()})
			}
			fmt.Fprintf(a.stdio.Err, "%s is ready again (was %s by %s)\n", safetext.Field(args[0]), was.Was, safetext.Field(was.By))
			return nil
		},
	}
}

// packagesFlag registers --packages, the work packages file a command reads.
func packagesFlag(fs *pflag.FlagSet, file *string) {
	fs.Var(once(file), "packages", "work packages `FILE` (default: work_packages of the config)")
}
