package hooks

import (
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
)

// One rule for a worker: what CheckOwner refuses, CommitAuthor does not
// take from trailers either, and SessionOf makes any session one that
// passes.
func TestCheckOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    locks.Owner
		ok   bool
	}{
		{"a worker with a session", locks.Owner{Holder: "alice@host", HolderType: "agent", Session: "s-1.a@b:c_d"}, true},
		{"no session", locks.Owner{Holder: "alice", HolderType: "human"}, true},
		{"another type", locks.Owner{Holder: "alice", HolderType: "robot"}, false},
		{"no worker", locks.Owner{HolderType: "agent"}, false},
		{"a padded worker", locks.Owner{Holder: " alice", HolderType: "agent"}, false},
		{"a worker too long", locks.Owner{Holder: strings.Repeat("a", locks.MaxHolderLen+1), HolderType: "agent"}, false},
		{"a format character", locks.Owner{Holder: "al\u200eice", HolderType: "agent"}, false},
		{"a line separator", locks.Owner{Holder: "al\u2028ice", HolderType: "agent"}, false},
		{"a session with a space", locks.Owner{Holder: "alice", HolderType: "agent", Session: "a b"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckOwner(tc.o); (err == nil) != tc.ok {
				t.Fatalf("CheckOwner(%+v) = %v, want ok %v", tc.o, err, tc.ok)
			}
			msg := "s\n\nLockgate-Worker: " + tc.o.Holder + "\nLockgate-Worker-Type: " + tc.o.HolderType + "\n"
			if tc.o.Session != "" {
				msg += "Lockgate-Session: " + tc.o.Session + "\n"
			}
			// git trims a trailer's value: a padded worker reads as
			// another, valid one.
			if me, found := CommitAuthor(msg, "#"); found != tc.ok && me == tc.o || tc.ok && me != tc.o {
				t.Errorf("CommitAuthor took %+v from trailers, found %v", me, found)
			}
			o := tc.o
			o.Session = SessionOf(o.Session + " \x00é")
			if err := CheckOwner(o); err != nil && tc.ok {
				t.Errorf("CheckOwner(%+v) = %v: SessionOf made a session it refuses", o, err)
			}
		})
	}
}
