package queue

import (
	"fmt"
	"strings"
	"testing"
)

// TestNoFreePackageMessage: a claim that finds nothing free names a few
// packages of each kind and how many more, not a line of thousands.
func TestNoFreePackageMessage(t *testing.T) {
	t.Parallel()
	var blocked, waiting []PackageStatus
	for i := range 1000 {
		blocked = append(blocked, PackageStatus{ID: fmt.Sprintf("B-%d", i)})
		waiting = append(waiting, PackageStatus{ID: fmt.Sprintf("W-%d", i), WaitsFor: []string{"X"}})
	}
	msg := (&NoFreePackageError{Path: "work-packages.yaml", Blocked: blocked, Waiting: waiting[:3]}).Error()
	for _, want := range []string{"B-0, B-1, B-2, B-3, B-4, and 995 more (lockgate packages lists them)", "W-2 (after X);"} {
		if !strings.Contains(msg+";", want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "B-5") || len(msg) > 400 {
		t.Errorf("message of %d bytes names more than 5 blocked packages: %s", len(msg), msg)
	}
}
