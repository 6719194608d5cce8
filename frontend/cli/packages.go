package cli

import (
	"cmp"
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
			return run(ctx, a, func(e *service.Workspace) (service.PackageList, error) { return e.ListPackages(ctx, file) }, a.showPackages)
		},
	}
}

// showPackages prints the queue as a table, then the task records it
// cannot read and the counts by state.
func (a *app) showPackages(e *service.Workspace, q service.PackageList) error {
	return a.reply(map[string]any{"path": q.Path, "packages": q.Packages, "counts": q.Counts, "drained": q.Drained(), "store": e.StoreName()}, func() {
		rows := [][]string{{"PACKAGE", "STATE", "PRIORITY", "HOLDER", "LEFT", "WAITS FOR", "TITLE"}}
		for _, s := range q.Packages {
			rows = append(rows, []string{s.ID, stateText(s), fmt.Sprint(s.Priority), cmp.Or(s.Holder, "-"), left(s, q.Now), waitsText(s), cmp.Or(s.Title, "-")})
		}
		table(a.stdio.Out, rows)
		unreadable, note := 0, ""
		for _, s := range q.Packages {
			if s.Unreadable == "" {
				continue
			}
			unreadable++
			note = fmt.Sprintf(", %d unreadable", unreadable)
			fmt.Fprintf(a.stdio.Err, "lockgate: %s: its task record is unreadable: %s\n", safetext.Field(s.ID), safetext.Field(s.Unreadable))
			if h, ok := q.Hints[s.ID]; ok {
				a.printHints(a.carry([]string{h})...)
			}
		}
		fmt.Fprintf(a.stdio.Err, "%d packages in %s: %d ready, %d claimed, %d done, %d failed%s\n", len(q.Packages), q.Path,
			q.Counts[service.PackageReady], q.Counts[service.PackageClaimed]-unreadable, q.Counts[service.PackageDone], q.Counts[service.PackageFailed], note)
	})
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
	return cmp.Or(strings.Join(w, ", "), "-")
}

func releasePackageCommand() *command {
	var req service.PackageRequest
	return &command{
		oneArg: "work package id",
		usage:  "release-package WP [--packages FILE]",
		short:  "give a claimed work package back: release its locks, and it is ready again",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &req.Packages)
		},
		run: func(ctx context.Context, a *app, args []string) error {
			req.ID = args[0]
			return a.release(ctx, func(e *service.Workspace) (service.Finished, error) { return e.ReleasePackage(ctx, req) }, nil)
		},
	}
}

func retryCommand() *command {
	var req service.RetryRequest
	return &command{
		oneArg: "work package id",
		usage:  "retry WP [--force] [--packages FILE]",
		short:  "make a failed work package ready again (a done one with --force; logged)",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &req.Packages)
			fs.BoolVar(&req.Force, "force", false, "reset a done package too")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			req.ID = args[0]
			return run(ctx, a, func(e *service.Workspace) (service.Retried, error) { return e.RetryPackage(ctx, req) },
				func(e *service.Workspace, was service.Retried) error {
					return a.reply(map[string]any{"package": req.ID, "was": was.Was, "by": was.By, "store": e.StoreName()}, func() {
						fmt.Fprintf(a.stdio.Err, "%s is ready again (was %s by %s)\n", safetext.Field(req.ID), was.Was, safetext.Field(was.By))
					})
				})
		},
	}
}

// packagesFlag registers --packages, the work packages file a command reads.
func packagesFlag(fs *pflag.FlagSet, file *string) {
	fs.Var(once(file), "packages", "work packages `FILE` (default: work_packages of the config)")
}
