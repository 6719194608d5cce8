package queue

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
)

// A package whose command could not be started goes back to the queue,
// its locks with it, and the loop's summary says why.
func TestWorkLoopGiveBack(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// lose lets the claim go before it is given back.
		lose     func(t *testing.T, e *Handler, j *WorkJob)
		wantBack bool
		wantSaid string
	}{
		{name: "given back", wantBack: true, wantSaid: "gave WP-2 back: make not found"},
		{name: "a claim already gone is left to expire",
			lose: func(t *testing.T, e *Handler, j *WorkJob) {
				if _, err := e.Mgr.Clear(ctx, "task:"+j.ID, e.Me); err != nil {
					t.Fatal(err)
				}
			},
			wantSaid: "could not give WP-2 back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, open := queueRepo(t, queuePackages)
			alice := open("alice")
			w, said := workLoop(alice, WorkRequest{})
			j, end, err := w.Next(ctx)
			if err != nil || end != nil || j.ID != "WP-2" {
				t.Fatalf("Next = %+v, %+v, %v; want WP-2", j, end, err)
			}
			if tt.lose != nil {
				tt.lose(t, alice, j)
			}
			w.GiveBack(ctx, j, "make not found")
			back := w.Summary().GivenBack
			if got := len(back) == 1 && back[0].Package == "WP-2" && back[0].Reason == "make not found"; got != tt.wantBack {
				t.Fatalf("given back %+v, want WP-2 for its reason: %v", back, tt.wantBack)
			}
			if i := slices.IndexFunc(*said, func(l string) bool { return strings.Contains(l, tt.wantSaid) }); i < 0 {
				t.Fatalf("said %q, want %q", *said, tt.wantSaid)
			}
			if !tt.wantBack {
				return
			}
			wps, err := alice.LoadPackages("")
			if err != nil {
				t.Fatal(err)
			}
			q, err := alice.Packages(ctx, wps, false)
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := q.status("WP-2"); s.State != PackageReady {
				t.Fatalf("WP-2 is %s, want ready again", s.State)
			}
			if _, err := alice.Store.Get(ctx, "src/b.go"); !errors.Is(err, locks.ErrNotFound) {
				t.Fatalf("src/b.go after the give-back: %v, want it free", err)
			}
		})
	}
}
