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
	"github.com/lockgate/lockgate/service/queue"
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
			return run(ctx, a, func(e *service.Workspace) (queue.PackageList, error) { return e.Queue().ListPackages(ctx, file) }, a.showPackages)
		},
	}
}

// showPackages prints the queue as a table, then the task records it
// cannot read and the counts by state.
func (a *app) showPackages(e *service.Workspace, q queue.PackageList) error {
	return a.reply(map[string]any{"path": q.Path, "packages": q.Packages, "counts": q.Counts, "drained": q.Drained(), "store": e.StoreName()}, func() {
		rows := [][]string{{"PACKAGE", "STATE", "PRIORITY", "HOLDER", "LEFT/FINISHED", "WAITS FOR", "TITLE"}}
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
			q.Counts[queue.PackageReady], q.Counts[queue.PackageClaimed]-unreadable, q.Counts[queue.PackageDone], q.Counts[queue.PackageFailed], note)
	})
}

func stateText(s queue.PackageStatus) string {
	switch {
	case s.Unreadable != "":
		return "unreadable"
	case s.Expired:
		return "ready (claim expired)"
	}
	return string(s.State)
}

func left(s queue.PackageStatus, now time.Time) string {
	if s.State == queue.PackageClaimed && s.Until != nil {
		return duration.Until(*s.Until, now)
	}
	if s.FinishedAt != nil {
		return stamp(*s.FinishedAt)
	}
	return "-"
}

func waitsText(s queue.PackageStatus) string {
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
	var req queue.PackageRequest
	return &command{
		oneArg: "work package id",
		usage:  "release-package WP [--packages FILE]",
		short:  "give a claimed work package back: release its locks, and it is ready again",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &req.Packages)
		},
		run: func(ctx context.Context, a *app, args []string) error {
			req.ID = args[0]
			return a.release(ctx, func(e *service.Workspace) (queue.Finished, error) { return e.Queue().ReleasePackage(ctx, req) }, nil)
		},
	}
}

func retryCommand() *command {
	var req queue.RetryRequest
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
			return run(ctx, a, func(e *service.Workspace) (queue.Retried, error) { return e.Queue().RetryPackage(ctx, req) },
				func(e *service.Workspace, was queue.Retried) error {
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
