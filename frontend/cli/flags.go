package cli

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/termstyle"
)

// onceString is a string flag that may be given once: for an option that
// names the input or how it is judged, a second one silently winning
// would check something other than what the caller meant.
type onceString struct {
	p   *string
	set *bool // shared by the registrations of one option
}

func once(p *string) *onceString { return &onceString{p: p, set: new(bool)} }

func (o *onceString) String() string {
	if o == nil || o.p == nil {
		return ""
	}
	return *o.p
}

func (o *onceString) Type() string { return "string" }

func (o *onceString) Set(v string) error {
	if *o.set {
		return errors.New("given more than once; give it once")
	}
	*o.p, *o.set = v, true
	return nil
}

// Globals are the options every command accepts, before or after its name.
type Globals struct {
	// Dir, ConfigFile and Store say where the command works; As,
	// WorkerType and Session as whom (see AddFlags).
	Dir, ConfigFile, Store  string
	As, WorkerType, Session string
	// AllowStoreMismatch lets a command take locks in a store other than
	// the one this clone's hooks read; JSON and Verbose are --json and -v.
	AllowStoreMismatch, JSON, Verbose bool
	// Color is --color: auto, always or never.
	Color string
	// configGiven: -c was given, before or after the command name; a
	// second one is refused, not silently preferred.
	configGiven bool
}

// AddFlags registers the global options on fs. Current values are the
// defaults, so registering again after the command name keeps what was
// given before it.
func (g *Globals) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&g.Dir, "dir", "C", g.Dir, "run as if lockgate was started in `DIR`")
	fs.VarP(&onceString{p: &g.ConfigFile, set: &g.configGiven}, "config", "c", "config `FILE` (default: .lockgate.yaml at the repository root)")
	fs.StringVar(&g.As, "as", g.As, "worker id (default $LOCKGATE_WORKER, else user@HOST)")
	fs.StringVar(&g.WorkerType, "worker-type", g.WorkerType, "human or agent (default $LOCKGATE_WORKER_TYPE, else human)")
	fs.StringVar(&g.Session, "session", g.Session, "session id (default $LOCKGATE_SESSION, else the worker id)")
	fs.StringVar(&g.Store, "store", g.Store, "lock store for this command: file, git, redis or redis://… (default $LOCKGATE_STORE, else this clone's, as lockgate store show says)")
	fs.BoolVar(&g.AllowStoreMismatch, "allow-store-mismatch", g.AllowStoreMismatch, "take locks with --store/$LOCKGATE_STORE even where this clone's hooks do not look")
	fs.BoolVar(&g.JSON, "json", g.JSON, "print data as JSON on stdout")
	fs.BoolVarP(&g.Verbose, "verbose", "v", g.Verbose, "log what lockgate does on stderr")
	if g.Color == "" {
		g.Color = termstyle.Auto
	}
	fs.StringVar(&g.Color, "color", g.Color, "colour on stderr: auto (on a terminal, unless NO_COLOR is set), always or never")
}
