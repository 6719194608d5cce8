package workflow

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// eventsDir is the root tree entry that holds the sharded events.
const eventsDir = "events"

// maxIDName is the longest id stored under its own name; longer ids (and
// ids that are not plain file names) are stored under a hash.
const maxIDName = 100

// location is where an event lives on the branch.
type location struct {
	l1, l2 string // shard directories, two hex digits each
	name   string // file name in the leaf: "<id>.json"
}

func (l location) String() string {
	return eventsDir + "/" + l.l1 + "/" + l.l2 + "/" + l.name
}

// locate returns the path of the event with this id.
func locate(id string) location {
	h := sha256.Sum256([]byte(id))
	hx := hex.EncodeToString(h[:])
	name := id + ".json"
	if !plainID(id) {
		name = "~" + hx + ".json"
	}
	return location{l1: hx[0:2], l2: hx[2:4], name: name}
}

// EventPath returns the path of the event with this id on the workflow
// branch, e.g. "events/3f/a2/0187d0c2a1b2c3d4e5f60718293a4b5c.json".
func EventPath(id string) string { return locate(id).String() }

// plainID reports whether id can be a file name as it is, on every file
// system a user may check the branch out on.
func plainID(id string) bool {
	if id == "" || len(id) > maxIDName || id[0] == '.' || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// normalize returns ev as it is stored: timestamp in UTC, and an id derived
// from its content when it has none (a hand-written journal line), so
// that committing the same line twice still finds it the second time. The
// line itself is encoded only for the events that get committed.
func normalize(ev journal.Event) (journal.Event, error) {
	if ev.Timestamp.IsZero() {
		return ev, fmt.Errorf("event %s (%s): no timestamp", ev.ID, ev.Action)
	}
	if ev.Action == "" {
		return ev, fmt.Errorf("event %s: no action", ev.ID)
	}
	ev.Timestamp = ev.Timestamp.UTC()
	if ev.ID == "" {
		b, err := encodeEvent(ev)
		if err != nil {
			return ev, err
		}
		h := sha256.Sum256(b)
		ev.ID = hex.EncodeToString(h[:16])
	}
	return ev, nil
}

// encodeEvent returns the journal line of ev, as journal.Append writes it:
// equal events give equal blobs on every clone.
func encodeEvent(ev journal.Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return buf.Bytes(), nil
}

// maxSubject bounds one line of a commit message.
const maxSubject = 200

// Subject is the one-line story of an event in `git log`:
// "lock_acquire api:GET /v1/users by agent-7".
func Subject(ev journal.Event) string {
	var b strings.Builder
	b.WriteString(ev.Action)
	switch {
	case ev.Key != "":
		b.WriteString(" " + ev.Key)
	case ev.TaskID != "":
		b.WriteString(" task " + ev.TaskID)
	case ev.ActivityID != "":
		b.WriteString(" activity " + ev.ActivityID)
	}
	if ev.Worker != "" {
		b.WriteString(" by " + ev.Worker)
	}
	return oneLine(b.String(), maxSubject)
}

// oneLine escapes control and format characters and invalid UTF-8 (a key
// or worker name is user input, and events may come from other tools) and
// cuts s to at most max bytes on a rune boundary.
func oneLine(s string, max int) string {
	s = safetext.Field(s)
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// message is the commit message for evs (at least one).
func message(evs []journal.Event) string {
	if len(evs) == 1 {
		return Subject(evs[0]) + "\n\nEvent-Id: " + oneLine(evs[0].ID, maxSubject) + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d events\n\n", len(evs))
	for _, ev := range evs {
		b.WriteString(Subject(ev))
		b.WriteByte('\n')
	}
	return b.String()
}
