package service_test

import (
	"testing"

	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/workflow"
)

// The session keeps the workflow branch's push rounds without linking the
// workflow package: the two must agree.
func TestSessionPushRounds(t *testing.T) {
	if session.PushRounds != workflow.PushRounds {
		t.Fatalf("session.PushRounds %d, workflow.PushRounds %d: keep them equal", session.PushRounds, workflow.PushRounds)
	}
}
