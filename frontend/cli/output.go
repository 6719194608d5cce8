package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

// writeJSON prints v as indented JSON. encoding/json escapes control
// characters; format characters (U+202E, U+200B, …) it leaves raw, so they
// are escaped here too: the JSON means the same and cannot steer a
// terminal it is printed on.
func writeJSON(w io.Writer, v any) error {
	return encodeJSON(w, v, "  ")
}

// writeJSONLine prints v as JSON on one line, escaped as writeJSON escapes
// it: one document of a newline-delimited stream.
func writeJSONLine(w io.Writer, v any) error {
	return encodeJSON(w, v, "")
}

// encodeJSON prints v as JSON, indented by indent (on one line when it is
// empty), and escapes what writeJSON says it escapes.
func encodeJSON(w io.Writer, v any, indent string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", indent)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	data := buf.Bytes()
	if safetext.Text(string(data)) != string(data) {
		var b strings.Builder
		for _, r := range string(data) {
			if safetext.Unsafe(r) && r != '\n' {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
		data = []byte(b.String())
	}
	_, err := w.Write(data)
	return err
}

// table prints aligned rows; the first row is the header. Cells are
// escaped: they hold names, keys and reasons other workers chose. Output
// is buffered: tabwriter alone makes a system call per cell.
func table(w io.Writer, rows [][]string) {
	bw := bufio.NewWriterSize(w, 64<<10)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = safetext.Field(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
	_ = bw.Flush()
}

// durationVar defines a duration flag that also takes days and weeks
// (2d, 1w): what human prints, it reads back.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name, usage string) {
	fs.Var((*duration.Value)(p), name, usage)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// release makes a request that releases locks and reports what it did
// even when it fails part way: the locks it keeps, then (done, when set
// and the request succeeded) what else it did, then what it released.
// Its events are on the remote before it reports (a.settle).
func (a *app) release(ctx context.Context, do func(*service.Workspace) (queue.Finished, error), done func(queue.Finished)) error {
	a.purpose.Settles = true
	e, err := a.workspace(ctx)
	if err != nil {
		return err
	}
	f, err := do(e)
	for _, k := range f.Kept {
		fmt.Fprintf(a.stdio.Err, "kept %s: %s\n", safetext.Field(k.Key), k.Why)
	}
	if err == nil && done != nil {
		done(f)
	}
	events := map[string]any{}
	a.settle(ctx, e, events)
	a.reportRelease(e, f.ReleaseResult, events, err)
	return err
}

// settle waits until the command's events are on the remote
// (service.SettleEvents) and says loudly when they are not: a warning
// naming the command that sends them, and, when the clone pushes its
// events, events_pushed (with events_push_error) in out for --json.
func (a *app) settle(ctx context.Context, e *service.Workspace, out map[string]any) {
	st := e.SettleEvents(ctx)
	if !st.Pushes {
		return
	}
	out["events_pushed"] = st.Pushed()
	if st.Err != nil {
		out["events_push_error"] = st.Err.Error()
		a.notify("warning", st.Err.Error())
	}
}

// released is what a request that only releases did, as release takes it.
func released(r locks.ReleaseResult, err error) (queue.Finished, error) {
	return queue.Finished{ReleaseResult: r}, err
}

// reportRelease says what a release did; under --json, when err ends the
// command, what was released goes with the error object.
func (a *app) reportRelease(e *service.Workspace, res locks.ReleaseResult, events map[string]any, err error) {
	if a.globals.JSON {
		out := map[string]any{"released": session.ViewsOf(res.Removed), "forced": session.ViewsOf(res.Forced),
			"missing": append([]string{}, res.Missing...), "store": e.StoreName()}
		maps.Copy(out, events)
		if err != nil {
			a.partial = out
		} else {
			_ = writeJSON(a.stdio.Out, out)
		}
	}
	now := e.Now()
	for _, l := range res.Removed {
		fmt.Fprintf(a.stdio.Err, "released %s in %s\n", safetext.Field(l.Key), e.StoreLabel())
	}
	for _, l := range res.Forced {
		fmt.Fprintf(a.stdio.Err, "forced: removed the lock of %s (%s, session %s) on %s in %s, created %s (%s old)\n",
			safetext.Field(l.Holder), safetext.Field(l.HolderType), safetext.Field(l.Session), safetext.Field(l.Key), e.StoreLabel(),
			stamp(l.CreatedAt), duration.Format(now.Sub(l.CreatedAt)))
	}
	for _, k := range res.Missing {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s was not locked in %s; nothing to release\n", safetext.Field(k), e.StoreLabel())
		for _, b := range e.Locks().HeldOnBranches(context.Background(), k) {
			a.printHints(fmt.Sprintf("you hold it on branch %s: `lockgate lock release --branch %s %s`", safetext.Field(b), hint.Quote(b), hint.Quote(k)))
		}
	}
}

// reportError prints err, which o classifies, on stderr the way a user
// should read it and, under --json, as an error object on stdout (with
// what the command did before it failed).
func (a *app) reportError(err error, o outcome.Outcome) {
	var exit *outcome.ExitError
	if errors.As(err, &exit) {
		return // already reported
	}
	fmt.Fprintf(a.stdio.Err, "%s %s\n", a.paint(termstyle.Error, "lockgate:"), safetext.Text(err.Error()))
	hints := a.printOutcome(o)
	if a.globals.JSON {
		out := map[string]any{}
		maps.Copy(out, a.partial)
		out["error"] = o.Object(err, strings.Join(hints, "; "))
		_ = writeJSON(a.stdio.Out, out)
	}
}

// styleOf decides, once, whether stderr gets colour (--color, NO_COLOR,
// TERM, a terminal).
func (a *app) styleOf() (termstyle.Style, error) {
	if a.styled {
		return a.style, nil
	}
	f, _ := a.stdio.Err.(*os.File)
	st, err := termstyle.For(a.globals.Color, getenv, f)
	if err != nil {
		return termstyle.Style{}, err
	}
	a.style, a.styled = st, true
	return st, nil
}

// paint colours text for stderr by role (nothing when colour is off).
func (a *app) paint(role termstyle.Role, text string) string {
	st, _ := a.styleOf()
	return st.Paint(role, text)
}

// printHints prints hint lines on stderr.
func (a *app) printHints(lines ...string) {
	hint.PrintAs(a.stdio.Err, a.paint(termstyle.Hint, "hint:"), lines...)
}
