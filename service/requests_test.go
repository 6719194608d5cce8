package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/usecasetest"
	"github.com/lockgate/lockgate/service"
)

// The helpers the use-case tests of the service share with the
// session's (internal/usecasetest).
var (
	epoch        = usecasetest.Epoch
	fixedClock   = usecasetest.FixedClock
	tickingClock = usecasetest.TickingClock
	repoWith     = usecasetest.RepoWith
	wantError    = usecasetest.WantError
	relTo        = usecasetest.RelTo
	envOf        = usecasetest.EnvOf
)

type notes = usecasetest.Notes

// loadAs loads the workspace of dir for worker as, a human of session as,
// on clock (nil: fixedClock), with an environment that names nothing.
func loadAs(t *testing.T, dir, as string, clock func() time.Time) *service.Workspace {
	t.Helper()
	if clock == nil {
		clock = fixedClock
	}
	e, err := service.Load(context.Background(), service.Options{Dir: dir, As: as, WorkerType: "human",
		Getenv: func(string) string { return "" }, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// openAs is loadAs with the lock store opened, for taking locks.
func openAs(t *testing.T, dir, as string, clock func() time.Time) *service.Workspace {
	t.Helper()
	e := loadAs(t, dir, as, clock)
	if err := e.Open(context.Background(), service.Purpose{TakesLocks: true}); err != nil {
		t.Fatal(err)
	}
	return e
}
