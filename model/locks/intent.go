package locks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// A change to the store and its events never diverge: the events are
// written down as an intent (journal.Intent) before the change, recorded
// after it, and the intent removed. A process killed in between leaves the
// intent, and the next Manager that changes the store first settles it:
// what the store shows was done gets its events (see proof).

// intent is what an intent file holds.
type intent struct {
	Events []intentEvent `json:"events"`
}

// intentEvent is one event of a change. An event with a proof is recorded
// when the store shows its proof; one without when every proof of its
// intent holds (the change was made whole).
type intentEvent struct {
	Event journal.Event `json:"event"`
	Proof *proof        `json:"proof,omitempty"`
}

// proof is what the store shows once an event's change on Key was made.
type proof struct {
	Key string `json:"key"`
	// EventID: the record carries it (an acquisition, renewal or refresh).
	// Token, with EventID, is the token a fresh acquisition gives the
	// record: a record with the event and another token was renewed.
	EventID string `json:"event_id,omitempty"`
	Token   string `json:"token,omitempty"`
	// Gone: no record of Token is left (a release or removal); with no
	// Token, no corrupt record is left.
	Gone bool `json:"gone,omitempty"`
}

// change is one change being made and recorded.
type change struct {
	m  *Manager
	in *journal.Intent // nil when events are not recorded
}

// begin settles what dead writers left, then writes down the change's
// events (filling in their ids, audit context and, where the caller has
// not, the time: a lower bound of the change's, which the caller sets
// when the store makes it). An error means the change must not be made.
func (m *Manager) begin(ctx context.Context, plan []intentEvent) (*change, error) {
	if m.Events == nil {
		return &change{m: m}, nil
	}
	if !m.recovered.Load() {
		if err := m.Recover(ctx); err != nil {
			return nil, err
		}
	}
	now := m.now().UTC()
	audit := AuditOf(ctx)
	for i := range plan {
		ev := &plan[i].Event
		if ev.ID == "" {
			ev.ID = journal.NewID()
		}
		if ev.Timestamp.IsZero() {
			ev.Timestamp = now
		}
		ev.RequestID = cmp.Or(ev.RequestID, audit.RequestID)
		ev.TraceID = cmp.Or(ev.TraceID, audit.TraceID)
	}
	data, err := json.Marshal(intent{Events: plan})
	if err != nil {
		return nil, fmt.Errorf("encode intent: %w", err)
	}
	in, err := m.Events.Intend(data)
	if err != nil {
		return nil, &JournalError{Err: err}
	}
	return &change{m: m, in: in}, nil
}

// record appends the events of the change made.
func (c *change) record(evs []journal.Event) error {
	if c.in == nil {
		return nil
	}
	if err := c.m.Events.Append(evs...); err != nil {
		return &JournalError{Err: err, Made: true}
	}
	return nil
}

// end lets go of the intent: removed when the change is recorded or was
// not made, left for Recover when it may have been made (dirty).
func (c *change) end(dirty bool) {
	switch {
	case c.in == nil:
	case dirty:
		c.in.Leave()
	default:
		_ = c.in.Done()
	}
}

// fail ends a change that failed part way with err: the events of the
// steps made so far are recorded, and the intent is left for Recover to
// judge the step that failed.
func (c *change) fail(evs []journal.Event, err error) error {
	if len(evs) > 0 {
		if rerr := c.record(evs); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	c.end(true)
	return err
}

// Recover records the events of the changes that dead writers made but did
// not record. Changing the store does it first, once per Manager; commands
// that show the journal or the locks call it too.
func (m *Manager) Recover(ctx context.Context) error {
	if m.Events == nil {
		return nil
	}
	err := m.Events.Recover(func(data []byte) ([]journal.Event, error) { return m.settle(ctx, data) })
	if err != nil {
		return fmt.Errorf("record the events of an interrupted lockgate command: %w", err)
	}
	m.recovered.Store(true)
	return nil
}

// settle returns the events of an intent whose change the store shows.
// On a Sealer the store is read under Seal: a change the dead writer sent
// that has not landed yet can then never land.
func (m *Manager) settle(ctx context.Context, data []byte) ([]journal.Event, error) {
	var in intent
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("corrupt intent (remove it once its change is checked): %w", err)
	}
	var out []journal.Event
	check := func(s Store) (bool, error) {
		out = out[:0]
		whole := true
		for _, ie := range in.Events {
			if ie.Proof == nil {
				continue
			}
			made, renewed, cur, err := shows(ctx, s, *ie.Proof)
			if err != nil {
				return false, err
			}
			if !made {
				whole = false
				continue
			}
			ev := ie.Event
			if renewed {
				ev.Action = journal.ActionRefresh
			}
			if cur != nil && ev.ExpiresAt == nil {
				// The store assigned the fence after the intent was written.
				ev.Fence, ev.ExpiresAt = grantOf(*cur)
			}
			if cur != nil && !renewed && ie.Proof.Token != "" {
				// A fresh grant: the record says when it was made (the
				// intent was written before any wait for it).
				ev.Timestamp = cur.CreatedAt.UTC()
			}
			out = append(out, ev)
		}
		if whole && len(out) > 0 {
			for _, ie := range in.Events {
				if ie.Proof == nil {
					out = append(out, ie.Event)
				}
			}
			out = withGrantFences(out)
		}
		return whole, nil
	}
	var err error
	if sealer, ok := m.Store.(Sealer); ok {
		err = sealer.Seal(ctx, check)
	} else {
		_, err = check(m.Store)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// shows reports whether the store shows p; renewed when the record carries
// the event under a token the acquisition did not give it; rec is that
// record.
func shows(ctx context.Context, s Store, p proof) (made, renewed bool, rec *Lock, err error) {
	cur, err := s.Get(ctx, p.Key)
	var corrupt *CorruptError
	switch {
	case errors.Is(err, ErrNotFound):
		return p.Gone, false, nil, nil
	case errors.As(err, &corrupt):
		return p.Gone && p.Token != "", false, nil, nil
	case err != nil:
		return false, false, nil, err
	case p.Gone:
		return p.Token == "" || cur.Token != p.Token, false, nil, nil
	}
	if cur.EventID != p.EventID {
		return false, false, nil, nil
	}
	return true, p.Token != "" && cur.Token != p.Token, &cur, nil
}

// Record appends events that no lock change carries (a change of the
// clone's store, say); an error says they are not in the journal.
func (m *Manager) Record(ctx context.Context, evs ...journal.Event) error {
	if m.Events == nil {
		return nil
	}
	audit := AuditOf(ctx)
	for i := range evs {
		evs[i].RequestID = cmp.Or(evs[i].RequestID, audit.RequestID)
		evs[i].TraceID = cmp.Or(evs[i].TraceID, audit.TraceID)
	}
	return m.Events.Append(evs...)
}
