package locks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// brokenAppend is a journal whose appends fail after the intent is
// written: a writer that dies, or a disk that fills, between the change
// and its event.
type brokenAppend struct{ *journal.Journal }

func (brokenAppend) Append(...journal.Event) error { return errors.New("disk full") }

func actions(t *testing.T, j *journal.Journal) []string {
	t.Helper()
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Action+" "+ev.Key)
	}
	return out
}

func TestJournalFailureUndoesAcquire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	if err := acquire(m, alice, time.Hour, "held.py"); err != nil {
		t.Fatal(err)
	}
	broken := &locks.Manager{Store: m.Store, Host: m.Host, PID: m.PID, Now: m.Now}
	broken.Events = brokenAppend{j}
	err := acquire(broken, alice, time.Hour, "new.py", "other.py")
	var je *locks.JournalError
	if !errors.As(err, &je) || je.Made {
		t.Fatalf("acquire with a broken journal = %v, want a *JournalError, not made", err)
	}
	// A fresh lock is released, a renewed one put back as it was.
	before, err := m.Store.Get(ctx, "held.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := acquire(broken, alice, 2*time.Hour, "held.py", "new.py"); !errors.As(err, &je) || je.Made {
		t.Fatalf("renewal with a broken journal = %v, want a *JournalError, not made", err)
	}
	if after, err := m.Store.Get(ctx, "held.py"); err != nil || !after.ExpiresAt.Equal(before.ExpiresAt) || after.EventID != before.EventID {
		t.Fatalf("held.py after the refused renewal: %+v %v, want as before: %+v", after, err, before)
	}
	if _, err := m.Store.Get(ctx, "new.py"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("new.py after the refused acquire: %v, want no lock", err)
	}
	next := locks.Manager{Store: m.Store, Events: j}
	if err := next.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"lock_acquire held.py"}
	if got := actions(t, j); !slices.Equal(got, want) {
		t.Fatalf("journal %v, want %v", got, want)
	}
}

func TestJournalFailureRecordedLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	if err := acquire(m, alice, time.Hour, "a.py", "b.py", "c.py"); err != nil {
		t.Fatal(err)
	}
	broken := &locks.Manager{Store: m.Store, Host: m.Host, PID: m.PID, Now: m.Now}
	broken.Events = brokenAppend{j}
	_, err := broken.Release(ctx, []string{"a.py"}, alice, false)
	var je *locks.JournalError
	if !errors.As(err, &je) || !je.Made {
		t.Fatalf("release with a broken journal = %v, want a *JournalError, made", err)
	}
	if _, err := broken.Refresh(ctx, []string{"b.py"}, alice, 2*time.Hour, 0, false); !errors.As(err, &je) || !je.Made {
		t.Fatalf("refresh with a broken journal = %v, want a *JournalError, made", err)
	}
	if _, err := broken.Clear(ctx, "c.py", bob); !errors.As(err, &je) || !je.Made {
		t.Fatalf("clear with a broken journal = %v, want a *JournalError, made", err)
	}
	// The next Manager's first change records them first, each once.
	next := locks.Manager{Store: m.Store, Events: j}
	if err := acquire(&next, alice, time.Hour, "d.py"); err != nil {
		t.Fatal(err)
	}
	if err := next.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	got := actions(t, j)
	want := []string{"lock_acquire a.py", "lock_acquire b.py", "lock_acquire c.py", "lock_release a.py", "lock_refresh b.py", "lock_clear c.py", "lock_acquire d.py"}
	if !slices.Equal(got, want) {
		t.Fatalf("journal %v, want %v", got, want)
	}
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs[3:6] {
		if ev.Fence == 0 {
			t.Errorf("recorded %s %s names no fence", ev.Action, ev.Key)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(filepath.Dir(j.Path()), "intents")); err != nil || len(ents) != 0 {
		t.Fatalf("intents left: %v %v", ents, err)
	}
}

func TestUnwritableJournalChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	if err := acquire(m, alice, time.Hour, "a.py"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(j.Path()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(j.Path(), 0o777); err != nil {
		t.Fatal(err)
	}
	var je *locks.JournalError
	if err := acquire(m, alice, time.Hour, "b.py"); !errors.As(err, &je) || je.Made {
		t.Fatalf("acquire = %v, want a *JournalError, not made", err)
	}
	if _, err := m.Release(ctx, []string{"a.py"}, alice, false); !errors.As(err, &je) || je.Made {
		t.Fatalf("release = %v, want a *JournalError, not made", err)
	}
	if _, err := m.Store.Get(ctx, "a.py"); err != nil {
		t.Fatalf("a.py: %v, want still held", err)
	}
	if _, err := m.Store.Get(ctx, "b.py"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("b.py: %v, want no lock", err)
	}
}

// failRelease is a store that cannot release: an acquisition whose event
// cannot be appended is then left made, for Recover to record.
type failRelease struct{ locks.Store }

func (failRelease) Release(context.Context, string, string) error { return errors.New("I/O error") }

// An acquisition recorded by Recover names its grant as one recorded at
// once: the store assigns the fence after the intent is written, so
// Recover takes fence and expiry from the record.
func TestRecoveredAcquireNamesTheGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	broken := &locks.Manager{Store: failRelease{m.Store}, Host: m.Host, PID: m.PID, Events: brokenAppend{j}}
	if err := acquire(broken, alice, time.Hour, "a.py"); err == nil {
		t.Fatal("acquire with a broken journal and store succeeded")
	}
	rec, err := m.Store.Get(ctx, "a.py")
	if err != nil {
		t.Fatalf("the acquisition was not left made: %v", err)
	}
	next := locks.Manager{Store: m.Store, Events: j}
	if err := next.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := j.Read(time.Time{})
	if err != nil || len(evs) != 1 {
		t.Fatalf("journal %+v, %v: want one event", evs, err)
	}
	if ev := evs[0]; ev.Action != journal.ActionAcquire || ev.Fence != rec.Fence || ev.Fence == 0 ||
		ev.ExpiresAt == nil || !ev.ExpiresAt.Equal(rec.ExpiresAt) {
		t.Fatalf("recovered %+v, want lock_acquire with fence %d expiring %v", ev, rec.Fence, rec.ExpiresAt)
	}
}

// An event that comes with an acquisition and names one of its keys (a
// claim's claimed_package) carries that key's grant fence, whether the
// acquisition records it or Recover does.
func TestRequestEventsNameTheGrantFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	claim := func(mgr *locks.Manager, key string) error {
		_, err := mgr.Acquire(ctx, locks.Request{Keys: []string{key, key + ".go"}, Owner: alice, TTL: time.Hour,
			Events: []journal.Event{{Worker: "alice", Action: journal.ActionClaim, Key: key}, {Worker: "alice", Action: journal.ActionHookBypass}}})
		return err
	}
	if err := claim(m, "task:A"); err != nil {
		t.Fatal(err)
	}
	broken := &locks.Manager{Store: failRelease{m.Store}, Host: m.Host, PID: m.PID, Events: brokenAppend{j}}
	err := claim(broken, "task:B")
	if err == nil {
		t.Fatal("claim with a broken journal and store succeeded")
	}
	if !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("claim with a broken journal and store: %v, want the journal's error", err)
	}
	next := locks.Manager{Store: m.Store, Events: j}
	if err := next.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	claims := 0
	for _, ev := range evs {
		switch ev.Action {
		case journal.ActionClaim:
			claims++
			rec, err := m.Store.Get(ctx, ev.Key)
			if err != nil || ev.Fence == 0 || ev.Fence != rec.Fence {
				t.Errorf("%s of %s: fence %d, want the grant's %d (%v)", ev.Action, ev.Key, ev.Fence, rec.Fence, err)
			}
		case journal.ActionHookBypass:
			if ev.Fence != 0 {
				t.Errorf("an event of no key got fence %d", ev.Fence)
			}
		}
	}
	if claims != 2 {
		t.Fatalf("%d claim events, want 2: %+v", claims, evs)
	}
}
