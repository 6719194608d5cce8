package lockops

import (
	"errors"
	"testing"

	"github.com/lockgate/lockgate/service/session"
)

func TestCheckID(t *testing.T) {
	tests := []struct {
		id      string
		wantErr bool
	}{
		{id: "WP-1"}, {id: "task_7.b"},
		{id: "", wantErr: true}, {id: "WP 1", wantErr: true}, {id: "a/b", wantErr: true}, {id: "a:b", wantErr: true},
		{id: "WP\x1b[2J", wantErr: true}, {id: "WP\u202e1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			var target any
			if tt.wantErr {
				target = new(*session.UsageError)
			}
			wantError(t, checkID("package", tt.id), target)
		})
	}
}

// wantError fails t unless err is as target says: nil, or an error of
// target's type.
func wantError(t *testing.T, err error, target any) {
	t.Helper()
	if target == nil {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	if err == nil || !errors.As(err, target) {
		t.Fatalf("error %v (%T), want a %T", err, err, target)
	}
}

// TestPortKey: a port's lock key is port:N.
func TestPortKey(t *testing.T) {
	for p, want := range map[int]string{41000: "port:41000", 8080: "port:8080"} {
		if got := portKey(p); got != want {
			t.Errorf("portKey(%d) = %s, want %s", p, got, want)
		}
	}
}
