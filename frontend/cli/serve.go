package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/httpserver"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/serveusers"
)

// serveDrain is how long a stopped server waits for the requests under way.
const serveDrain = 10 * time.Second

func serveCommand() *command {
	var (
		listen          string
		publicRead      bool
		tlsCert, tlsKey string
		publicURLs      []string
		limit           = httpserver.DefaultRateLimit
	)
	return &command{
		takesLocks: true,
		usage:      "serve",
		short:      "serve the lock table over HTTP: git-lfs locking (/lfs), the JSON API (/api/v1), the web board (docs/serve.md)",
		long: "serve the lock table over HTTP (docs/serve.md):\n" +
			"  /lfs      the git-lfs File Locking API: git lfs lock, locks, unlock and the push-time verify\n" +
			"  /api/v1   the JSON API: locks, events (also as a stream), work packages\n" +
			"  /         the web board (docs/webboard.md), which a signed-in user may clear locks from\n" +
			"Every request but /healthz needs a user's token (lockgate serve user add); --public-read lets reads in without one.\n" +
			"The server answers only to its listen address (and the loopback names when it listens on loopback) and to the hosts of\n" +
			"--public-url; a request naming another host is 421, so that a page under a name rebound to this address reads nothing.",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&listen, "listen", "127.0.0.1:7480", "address to listen on, HOST:PORT")
			fs.BoolVar(&publicRead, "public-read", false, "let requests that only read the locks in without a token")
			fs.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with the PEM certificate (chain) in `FILE` (with --tls-key)")
			fs.StringVar(&tlsKey, "tls-key", "", "the PEM private key of --tls-cert, in `FILE`")
			fs.Float64Var(&limit.PerSecond, "rate-limit", limit.PerSecond, "requests a second each user (and each address without a token) may send on average; 0: no limit")
			fs.IntVar(&limit.Burst, "rate-burst", limit.Burst, "requests each user (and each address without a token) may send at once")
			fs.StringArrayVar(&publicURLs, "public-url", nil, "a `URL` the server is reached by besides its listen address (a DNS name, a proxy in front, another port); repeatable")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return unknownServeCommand(args[0])
			}
			if (tlsCert == "") != (tlsKey == "") {
				return service.Usagef("serve: give --tls-cert and --tls-key together, or neither")
			}
			if err := limit.Check(); err != nil {
				return service.Usagef("serve: %v", err)
			}
			var public []httpserver.PublicURL
			for _, s := range publicURLs {
				u, err := httpserver.ParsePublicURL(s)
				if err != nil {
					return service.Usagef("serve --public-url %s: %v", s, err)
				}
				public = append(public, u)
			}
			a.purpose.Server = true
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return service.Usagef("serve --listen %s: %v", listen, err)
			}
			scheme := "http"
			if tlsCert != "" {
				tl, err := httpserver.WithTLS(ln, tlsCert, tlsKey)
				if err != nil {
					_ = ln.Close() // never served on: nothing to lose
					return service.Usagef("serve --tls-cert %s --tls-key %s: %v", tlsCert, tlsKey, err)
				}
				ln, scheme = tl, "https"
			}
			fmt.Fprintf(a.stdio.Err, "lockgate: serving the locks of %s on %s://%s (git-lfs: lfs.url or remote.NAME.lfsurl %s://%s/lfs, the token in a credential helper: docs/serve.md)\n", e.StoreLabel(), scheme, ln.Addr(), scheme, ln.Addr())
			switch {
			case e.StoreName() == service.KindFile && e.WorkTree() == "":
				// The server's bare repository: its pre-receive hook reads
				// this store, so pushes are held to the locks; clones' hooks
				// are not, and say so only at the push.
				fmt.Fprintln(a.stdio.Err, "lockgate: note: the file store keeps its locks in this bare repository: lockgate's pre-receive hook in it (lockgate install --hook pre-receive) refuses pushes over them, but clones' own hooks do not see them, so their commits are refused only when pushed.\n"+
					"For clones' hooks to see them too: set locks.store: git (this repository's own ref) or locks.store: redis://HOST:PORT/DB in .lockgate.yaml, commit it on the default branch, then restart the server (docs/serve.md)")
			case e.StoreName() == service.KindFile:
				// The file store lives in this clone's git directory: a lock
				// taken through the server binds no other clone's hooks.
				fmt.Fprintln(a.stdio.Err, "lockgate: warning: the file store keeps its locks in this clone: only this clone's hooks see the locks taken through the server, other clones' commits are not refused.\n"+
					"Share one store with every clone: set locks.store: git (on the remote) or locks.store: redis://HOST:PORT/DB in .lockgate.yaml and commit it, then restart the server (docs/stores.md)")
			}
			srv := httpserver.New(e, httpserver.Options{PublicRead: publicRead, RateLimit: limit, Addr: ln.Addr().String(), PublicURLs: public,
				Log: func(format string, args ...any) {
					fmt.Fprintf(a.stdio.Err, "lockgate: %s\n", safetext.Field(fmt.Sprintf(format, args...)))
				}})
			fmt.Fprintf(a.stdio.Err, "lockgate: answering to the hosts %s; other hosts are 421 (name more with --public-url URL)\n", strings.Join(srv.Hosts(), ", "))
			if ip, ok := ln.Addr().(*net.TCPAddr); ok && ip.IP.IsUnspecified() && len(public) == 0 {
				// Every interface, but the names and addresses clients use
				// for it are not known: only the loopback ones are answered.
				fmt.Fprintf(a.stdio.Err, "lockgate: warning: --listen %s takes connections on every interface, but requests for this machine's other names and addresses are refused (421): name each one clients use with --public-url http://HOST:PORT\n", listen)
			}
			// The events of what the server changes reach the workflow
			// branch in batches after it answers (docs/serve.md); the
			// rest is committed when it stops.
			stopCommits := e.CommitInBackground()
			err = srv.Serve(ctx, ln, serveDrain)
			stopCommits()
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdio.Err, "lockgate: stopped")
			return nil
		},
		sub: map[string]*command{
			"user": {usage: "serve user <command>", short: "the users of lockgate serve and their tokens", sub: map[string]*command{
				"add":    serveUserAddCommand(),
				"list":   serveUserListCommand(),
				"remove": serveUserRemoveCommand(),
			}},
		},
	}
}

// unknownServeCommand is the error of `lockgate serve ARG`: serve runs
// without arguments, so an argument is a mistyped subcommand, and cobra's
// suggestions (as for every other command group) name the closest.
func unknownServeCommand(arg string) error {
	c := &cobra.Command{Use: "serve", SuggestionsMinimumDistance: 2}
	c.AddCommand(&cobra.Command{Use: "user", Run: func(*cobra.Command, []string) {}})
	msg := fmt.Sprintf("unknown command %q for %q", arg, "lockgate serve")
	if s := c.SuggestionsFor(arg); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return service.Usagef("%s (see `lockgate serve --help`)", msg)
}

func serveUserAddCommand() *command {
	var req serveusers.AddRequest
	return &command{
		oneArg:  "NAME",
		noStore: true,
		usage:   "serve user add NAME",
		short:   "add a user of lockgate serve; its token is the last line printed, shown once",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&req.Type, "type", "human", "the user's worker type: human or agent")
			fs.BoolVar(&req.Admin, "admin", false, "let the user clear other users' locks through the server (git lfs unlock --force, DELETE ?force=true, the board's clear)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			req.Name = args[0]
			res, err := e.Users().Add(req)
			if err != nil {
				return err
			}
			return a.reply(map[string]any{"name": res.User.Name, "type": res.User.Type, "admin": res.User.Admin, "token": res.Token}, func() {
				// The token is the last line, for scripts; before it, how the
				// person's own hooks come to act as the user, or the user's
				// git-lfs locks would bind the person's own commits.
				role := res.User.Type
				if res.User.Admin {
					role += ", admin"
				}
				fmt.Fprintf(a.stdio.Out, "added %s (%s); where this user runs git, lockgate must act as the same worker (put this in the shell profile or the environment there):\n  %s\nits token, shown only now:\n%s\n",
					safetext.Field(res.User.Name), role, service.WorkerSetup(res.User), res.Token)
			})
		},
	}
}

func serveUserListCommand() *command {
	return &command{
		noArgs:  true,
		noStore: true,
		usage:   "serve user list",
		short:   "list the users of lockgate serve",
		run: func(ctx context.Context, a *app, _ []string) error {
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			us, err := e.Users().List()
			if err != nil {
				return err
			}
			return a.reply(us, func() {
				tw := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTYPE\tADMIN\tADDED")
				for _, u := range us {
					admin := "no"
					if u.Admin {
						admin = "yes"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safetext.Field(u.Name), u.Type, admin, u.Created.UTC().Format(time.RFC3339))
				}
				tw.Flush()
			})
		},
	}
}

func serveUserRemoveCommand() *command {
	return &command{
		oneArg:  "NAME",
		noStore: true,
		usage:   "serve user remove NAME",
		short:   "remove a user of lockgate serve: its token stops working",
		run: func(ctx context.Context, a *app, args []string) error {
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			if err := e.Users().Remove(args[0]); err != nil {
				return err
			}
			return a.reply(map[string]string{"removed": args[0]}, func() {
				fmt.Fprintf(a.stdio.Out, "removed %s\n", safetext.Field(args[0]))
			})
		},
	}
}
