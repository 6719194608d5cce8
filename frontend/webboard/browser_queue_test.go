package webboard

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/browsertest"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/queue"
)

// TestPageQueueSaysWhyAPackageWaits: the page's queue says why a ready
// package waits, as the terminal board does: the dependency not done,
// with its state, and the lock in its way, with its holder.
func TestPageQueueSaysWhyAPackageWaits(t *testing.T) {
	t.Parallel()
	view := snapshot(time.Now())
	q := *view.Queue
	q.Packages = append([]queue.PackageStatus(nil), q.Packages...)
	q.Packages[1].HeldBy = []service.LockView{{Key: "docs/**", Holder: "carol"}}
	view.Queue = &q
	url := serve(t, Handler(&fakeSource{view: view}))
	p := browsertest.Open(t, url+"/", browsertest.Options{})
	p.WaitFor(`document.querySelectorAll("#queue tbody tr").length === 2`)
	var got []string
	if err := json.Unmarshal(p.Eval(`Array.from(document.querySelectorAll("#queue tbody td.waits")).map(td => td.textContent)`), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "" || got[1] != "after wp-1 (claimed); docs/** held by carol" {
		t.Fatalf("the queue's waits column = %q, want wp-2 waiting after wp-1 (claimed) and for carol's docs/**", got)
	}
}
