package gitstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/record"
)

func ledgerTable(t *testing.T, fence uint64, ls ...locks.Lock) *table {
	t.Helper()
	tb := emptyTable()
	tb.fence = fence
	for _, l := range ls {
		data, err := record.Encode(l)
		if err != nil {
			t.Fatal(err)
		}
		name := record.Name(l.Key)
		tb.recs[name] = newRecord(name, fmt.Sprintf("oid-%s-%d-%s", l.Token, l.Fence, l.ExpiresAt), data)
	}
	return tb
}

// TestUnlogged: a later state may end or hand over a live lock only when
// its commit names that lock as it was; expired and corrupt records may
// go, renewals change nothing, fences never go down.
func TestUnlogged(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	lock := func(key, holder, token string, fence uint64, exp time.Time) locks.Lock {
		return locks.Lock{Key: key, Holder: holder, HolderType: "human", Session: holder, Token: token, Fence: fence,
			CreatedAt: now.Add(-time.Hour), ExpiresAt: exp}
	}
	live := lock("src/x.txt", "bob", "t1", 2, now.Add(time.Hour))
	expired := lock("src/x.txt", "bob", "t1", 2, now.Add(-time.Minute))
	renewed := live
	renewed.ExpiresAt = now.Add(2 * time.Hour)
	taken := lock("src/x.txt", "mal", "t2", 3, now.Add(time.Hour))
	lowered := lock("src/x.txt", "bob", "t1", 1, now.Add(time.Hour))
	msg := func(cs ...change) func() (string, error) {
		return func() (string, error) {
			return "tree x\n\nchange\n\n" + strings.Join(changeLines(cs), "\n") + "\n", nil
		}
	}
	for _, tc := range []struct {
		name         string
		older, newer *table
		message      func() (string, error)
		want         string // a reason's text; "" none
	}{
		{"dropped unannounced", ledgerTable(t, 2, live), ledgerTable(t, 2), msg(), "drops bob's live lock on src/x.txt (fence 2) without a release"},
		{"released", ledgerTable(t, 2, live), ledgerTable(t, 2), msg(change{opRelease, "src/x.txt", 2, "bob"}), ""},
		{"cleared", ledgerTable(t, 2, live), ledgerTable(t, 2), msg(change{opClear, "src/x.txt", 2, "bob"}), ""},
		{"release of another fence", ledgerTable(t, 2, live), ledgerTable(t, 2), msg(change{opRelease, "src/x.txt", 1, "bob"}), "without a release"},
		{"release by another holder", ledgerTable(t, 2, live), ledgerTable(t, 2), msg(change{opRelease, "src/x.txt", 2, "mal"}), "without a release"},
		{"expired", ledgerTable(t, 2, expired), ledgerTable(t, 2), msg(), ""},
		{"renewed", ledgerTable(t, 2, live), ledgerTable(t, 2, renewed), msg(), ""},
		{"taken unannounced", ledgerTable(t, 2, live), ledgerTable(t, 3, taken), msg(), "gives bob's live lock on src/x.txt (fence 2) to mal without a take-over"},
		{"taken over", ledgerTable(t, 2, live), ledgerTable(t, 3, taken), msg(change{opTakeOver, "src/x.txt", 2, "bob"}), ""},
		{"fence of a lock lowered", ledgerTable(t, 2, live), ledgerTable(t, 2, lowered), msg(change{opTakeOver, "src/x.txt", 2, "bob"}), "lowers the fence of src/x.txt from 2 to 1"},
		{"moved to another name", ledgerTable(t, 2, live), func() *table {
			tb := ledgerTable(t, 2, renewed)
			for name, r := range tb.recs {
				delete(tb.recs, name)
				tb.recs["legacy/"+name] = r
			}
			return tb
		}(), msg(), ""},
		{"fence counter lowered", ledgerTable(t, 5), ledgerTable(t, 4), msg(), "lowers the fence counter from 5 to 4"},
		{"unreadable change line", ledgerTable(t, 2, live), ledgerTable(t, 2), func() (string, error) { return "x\n\n" + changeTrailer + "{\n", nil }, "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reasons, err := unlogged(tc.older, tc.newer, tc.message, now)
			if tc.want == "error" {
				if err == nil {
					t.Fatalf("want an error, got reasons %q", reasons)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(reasons, "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("reasons %q, want %q", got, tc.want)
			}
		})
	}
}

// TestChangeLinesRoundTrip: every change a state writes is read back,
// whatever its key holds.
func TestChangeLinesRoundTrip(t *testing.T) {
	cs := []change{{opRelease, "api:GET /v1/users", 7, "bob"}, {opClear, "src/a \"b\".txt", 1, "al\nice"}, {opTakeOver, "x", 0, ""}}
	got, err := parseChanges("subject\n\n" + strings.Join(changeLines(cs), "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cs) {
		t.Fatalf("read %d changes, want %d: %+v", len(got), len(cs), got)
	}
	for i := range cs {
		if got[i] != cs[i] {
			t.Errorf("change %d: %+v, want %+v", i, got[i], cs[i])
		}
	}
}

// FuzzParseChanges: any commit message is read without a panic, and the
// changes read from one are written back as lines that read the same.
func FuzzParseChanges(f *testing.F) {
	f.Add("release a\n\n" + changeTrailer + `{"op":"release","key":"a","fence":1,"holder":"bob"}` + "\n")
	f.Add(changeTrailer + "{")
	f.Add(changeTrailer + `{"op":"clear","key":""}`)
	f.Add("no changes here\n")
	f.Fuzz(func(t *testing.T, msg string) {
		cs, err := parseChanges(msg)
		if err != nil {
			return
		}
		again, err := parseChanges(strings.Join(changeLines(cs), "\n"))
		if err != nil || len(again) != len(cs) {
			t.Fatalf("changes %+v read back as %+v, %v", cs, again, err)
		}
	})
}
