package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/usecasetest"
	"github.com/lockgate/lockgate/service/session"
)

// The helpers the use-case tests of the session share with the
// service's (internal/usecasetest).
var (
	epoch      = usecasetest.Epoch
	fixedClock = usecasetest.FixedClock
	repoWith   = usecasetest.RepoWith
	wantError  = usecasetest.WantError
	relTo      = usecasetest.RelTo
	envOf      = usecasetest.EnvOf
)

type notes = usecasetest.Notes

// loadAs loads the workspace of dir for worker as, a human of session as,
// on clock (nil: fixedClock), with an environment that names nothing.
func loadAs(t *testing.T, dir, as string, clock func() time.Time) *session.Workspace {
	t.Helper()
	if clock == nil {
		clock = fixedClock
	}
	e, err := session.Load(context.Background(), session.Options{Dir: dir, As: as, WorkerType: "human",
		Getenv: func(string) string { return "" }, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}
