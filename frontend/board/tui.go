package board

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service/session"
)

// Refresh is how often the board reads the store again.
const Refresh = time.Second

// The full-screen board is a small loop on the terminal in raw mode, not a
// TUI framework: bubbletea and lipgloss, linked into the one lockgate
// binary, cost every hook 0.8 ms at start (their package initialisation),
// where the allowance is 0.1 ms (BENCHMARKS.md).

// model is what the board shows and what the keys change.
type model struct {
	snap    Snapshot
	view    View
	err     error
	confirm string // key waiting for y
	holder  string
	status  string
}

// workers are the holders of the snapshot's locks, sorted.
func (m *model) workers() []string {
	var ws []string
	for _, e := range m.snap.Locks {
		if e.Err == nil && !session.IsQueueState(e.Lock) && !slices.Contains(ws, e.Holder) {
			ws = append(ws, e.Holder)
		}
	}
	slices.Sort(ws)
	return ws
}

// setSnap shows s, keeping the selection in range.
func (m *model) setSnap(s Snapshot, err error) {
	m.snap, m.err = s, err
	_, list := rows(m.snap, m.view)
	m.view.Selected = min(m.view.Selected, max(len(list)-1, 0))
}

// key applies one key; it returns what to do: "quit", "reload", "clear"
// (of m.confirm's key, once confirmed, in clearKey) or "".
func (m *model) key(k string) (action, clearKey string) {
	if m.confirm != "" {
		key := m.confirm
		m.confirm = ""
		if k == "y" {
			m.status = "clearing " + safetext.Field(key) + "…"
			return "clear", key
		}
		m.status = "not cleared"
		return "", ""
	}
	switch k {
	case "q", "ctrl+c", "esc":
		return "quit", ""
	case "up", "k":
		m.view.Selected = max(m.view.Selected-1, 0)
	case "down", "j":
		_, list := rows(m.snap, m.view)
		m.view.Selected = min(m.view.Selected+1, max(len(list)-1, 0))
	case "s":
		i := slices.Index(Sorts, m.view.Sort)
		m.view.Sort = Sorts[(i+1)%len(Sorts)]
	case "w":
		ws := append([]string{""}, m.workers()...)
		i := slices.Index(ws, m.view.Worker)
		m.view.Worker = ws[(i+1)%len(ws)]
		m.view.Selected = 0
	case "r":
		return "reload", ""
	case "c":
		if key, holder := selectedKey(m.snap, m.view); key != "" {
			m.confirm, m.holder = key, holder
		}
	}
	return "", ""
}

// render is the whole screen.
func (m *model) render() string {
	out := Frame(m.snap, m.view)
	switch {
	case m.err != nil:
		out += "error: " + safetext.Field(m.err.Error()) + "\n"
	case m.confirm != "":
		out += fmt.Sprintf("clear %s, held by %s? (logged) y/n\n", safetext.Field(m.confirm), safetext.Field(m.holder))
	case m.status != "":
		out += m.status + "\n"
	}
	return out + "q quit · ↑↓ select · s sort · w worker · c clear · r refresh\n"
}

// keys reads key presses from r: letters as themselves, arrows as "up"
// and "down", ^C as "ctrl+c", a lone escape as "esc".
func keys(r io.Reader, out chan<- string) {
	buf := make([]byte, 16)
	for {
		n, err := r.Read(buf)
		if err != nil {
			close(out)
			return
		}
		b := buf[:n]
		for len(b) > 0 {
			switch {
			case len(b) >= 3 && b[0] == 0x1b && b[1] == '[' && (b[2] == 'A' || b[2] == 'B'):
				out <- map[byte]string{'A': "up", 'B': "down"}[b[2]]
				b = b[3:]
			case b[0] == 0x1b && len(b) >= 2 && b[1] == '[':
				// Another key's sequence: skipped to its final byte.
				i := 2
				for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
					i++
				}
				b = b[min(i+1, len(b)):]
			case b[0] == 0x1b:
				out <- "esc"
				b = b[1:]
			case b[0] == 3:
				out <- "ctrl+c"
				b = b[1:]
			default:
				out <- string(b[:1])
				b = b[1:]
			}
		}
	}
}

// Run shows the board full screen on the terminal in and out until the
// user quits or ctx ends; the terminal is put back as it was.
func Run(ctx context.Context, src Source, in, out *os.File) error {
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return fmt.Errorf("board: %w", err)
	}
	defer func() { _ = term.Restore(int(in.Fd()), state) }()
	fmt.Fprint(out, "\x1b[?1049h\x1b[?25l") // the alternate screen, no cursor
	defer fmt.Fprint(out, "\x1b[?25h\x1b[?1049l")

	m := &model{view: View{Sort: Sorts[0]}}
	draw := func() {
		if w, h, err := term.GetSize(int(out.Fd())); err == nil {
			m.view = layout(m.snap, m.view, h)
			m.view.Width = w
		}
		screen := strings.ReplaceAll(m.render(), "\n", "\x1b[K\r\n")
		fmt.Fprint(out, "\x1b[H"+screen+"\x1b[J")
	}
	reload := func() { m.setSnap(src.Snapshot(ctx)) }
	reload()
	draw()
	pressed := make(chan string, 8)
	go keys(in, pressed)
	tick := time.NewTicker(Refresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			reload()
		case k, ok := <-pressed:
			if !ok {
				return nil
			}
			switch action, key := m.key(k); action {
			case "quit":
				return nil
			case "reload":
				reload()
			case "clear":
				draw()
				if err := src.Clear(ctx, key); err != nil {
					m.status = "could not clear " + safetext.Field(key) + ": " + safetext.Field(err.Error())
				} else {
					m.status = "cleared " + safetext.Field(key) + " (logged)"
				}
				reload()
			}
		}
		draw()
	}
}
