package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
)

// writeJSON prints v as indented JSON. encoding/json escapes control
// characters; format characters (U+202E, U+200B, …) it leaves raw, so they
// are escaped here too: the JSON means the same and cannot steer a
// terminal it is printed on.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
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

// acquired is one lock taken by `lock acquire`, `claim`, `pause`, `plan
// --acquire` under --json: the lock (without its owner token), whether it
// was already ours, and the expired record it replaced.
type acquired struct {
	service.LockView
	Renewed  bool              `json:"renewed"`
	TookOver *service.LockView `json:"took_over,omitempty"`
}

func acquiredViews(res []locks.Result) []acquired {
	out := make([]acquired, 0, len(res))
	for _, r := range res {
		v := acquired{LockView: service.ViewOf(r.Lock), Renewed: r.Renewed}
		if r.TookOver != nil {
			t := service.ViewOf(*r.TookOver)
			v.TookOver = &t
		}
		out = append(out, v)
	}
	return out
}
