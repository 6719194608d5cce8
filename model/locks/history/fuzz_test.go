package history_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// FuzzBuild: any events the log may hold (it is written by every clone)
// build grants without a panic, and the answers agree: a grant proven live
// over a span may have been live then, and an undecided one too.
func FuzzBuild(f *testing.F) {
	f.Add([]byte(`{"id":"1","timestamp":"2026-11-23T10:00:00Z","worker":"a","worker_type":"agent","action":"lock_acquire","key":"src/**","fence":1,"expires_at":"2026-11-23T11:00:00Z"}
{"id":"2","timestamp":"2026-11-23T10:10:00Z","worker":"b","worker_type":"human","action":"lock_release","key":"src/**","fence":1,"details":"forced: was held by a"}
{"id":"3","timestamp":"2026-11-23T10:20:00Z","worker":"a","worker_type":"agent","action":"lock_refresh","key":"x.go","fence":4,"expires_at":"2026-11-23T09:00:00Z"}
{"id":"4","timestamp":"2026-11-23T10:30:00Z","worker":"a","worker_type":"agent","action":"pause","key":"feature:F:pause"}`))
	f.Add([]byte(`{"id":"5","timestamp":"2026-11-23T10:00:00Z","worker":"a","worker_type":"agent","action":"lock_clear","key":"A.GO"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var evs []journal.Event
		for _, line := range bytes.Split(data, []byte("\n")) {
			if ev, err := journal.ParseLine(line); err == nil {
				evs = append(evs, ev)
			}
		}
		l := history.Build(evs)
		base := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		paths := []string{"src/a.go", "x.go", "a.go", "feature:F:pause"}
		// Built for the paths, the log answers for them as built whole.
		lf := history.BuildFor(evs, paths)
		for m := -90; m <= 90; m += 15 {
			from := base.Add(time.Duration(m) * time.Minute)
			to := from.Add(5 * time.Second)
			for _, who := range []locks.Owner{{Holder: "a"}, {Holder: "b"}} {
				want, _ := l.During(from, to, who).Covering(context.Background(), paths)
				got, _ := lf.During(from, to, who).Covering(context.Background(), paths)
				wantNS, _ := l.During(from, to, who).InNamespace(context.Background(), "feature")
				gotNS, _ := lf.During(from, to, who).InNamespace(context.Background(), "feature")
				if len(got) != len(want) || len(gotNS) != len(wantNS) ||
					len(lf.During(from, to, who).Unshown(paths)) != len(l.During(from, to, who).Unshown(paths)) {
					t.Fatalf("BuildFor answers %v %v, Build %v %v", got, gotNS, want, wantNS)
				}
			}
		}
		for _, who := range []locks.Owner{{Holder: "a", Session: ""}, {Holder: "b", Session: ""}} {
			for m := -90; m <= 90; m += 15 {
				from := base.Add(time.Duration(m) * time.Minute)
				to := from.Add(5 * time.Second)
				v := l.During(from, to, who)
				if _, err := v.Covering(context.Background(), paths); err != nil {
					t.Fatal(err)
				}
				for _, g := range v.Unshown(paths) {
					if !g.Possibly(from, to) {
						t.Fatalf("unshown grant %+v was not possibly live during %v..%v", g, from, to)
					}
				}
			}
		}
		for _, g := range l.Grants() {
			for m := -90; m <= 90; m += 15 {
				from := base.Add(time.Duration(m) * time.Minute)
				to := from.Add(5 * time.Second)
				if g.Throughout(from, to) && !g.Possibly(from, to) {
					t.Fatalf("grant %+v live throughout %v..%v but not possibly", g, from, to)
				}
				if g.Undecided(from, to) && (!g.Possibly(from, to) || g.Throughout(from, to)) {
					t.Fatalf("grant %+v undecided during %v..%v yet decided", g, from, to)
				}
			}
		}
	})
}
