package webboard

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lockgate/lockgate/internal/browsertest"
	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

// workspace opens the repository at dir as worker as (a human).
func workspace(t *testing.T, dir, as string) *service.Workspace {
	t.Helper()
	ctx := context.Background()
	e, err := service.Load(ctx, service.Options{Dir: dir, As: as, WorkerType: "human"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(ctx, service.Purpose{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestPageOverService: the board of a real repository, read by the
// service a frame at a time, shows a lock taken through the service, and
// one taken after the page loaded, without a reload.
func TestPageOverService(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("README.md", "x\n")
	r.Commit("init")
	ctx := context.Background()
	alice, bob := workspace(t, r.Dir, "alice"), workspace(t, r.Dir, "bob")
	if _, err := alice.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"README.md"}, Reason: xss}); err != nil {
		t.Fatal(err)
	}
	viewer := workspace(t, r.Dir, "viewer")
	url := serve(t, Handler(SourceFunc(func(ctx context.Context) (service.BoardView, error) {
		return viewer.Board().Snapshot(ctx)
	})))
	p := browsertest.Open(t, url+"/", browsertest.Options{})
	p.WaitFor(`Array.from(document.querySelectorAll("#locks td.reason")).some(td => td.textContent === ` + jsString(xss) + `)`)
	if _, err := bob.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"db:schema:users"}, Reason: "schema"}); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(`Array.from(document.querySelectorAll("#locks tbody tr")).some(tr => tr.cells[0].textContent === "bob" && tr.cells[2].textContent === "db:schema:users")`)
	if got := string(p.Eval(`document.querySelectorAll("img").length`)); got != "0" {
		t.Fatalf("the page has %s img elements", got)
	}
}

// jsString is s as a script's string literal.
func jsString(s string) string {
	data, _ := json.Marshal(s) // a string always encodes
	return string(data)
}
