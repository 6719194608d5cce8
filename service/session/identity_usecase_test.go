package session_test

import (
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/session"
)

func TestOwner(t *testing.T) {
	tests := []struct {
		name    string
		opts    session.Options
		want    locks.Owner
		wantErr any
	}{
		{name: "the options first", opts: session.Options{As: "alice", WorkerType: "agent", Session: "s1",
			Getenv: envOf("LOCKGATE_WORKER=bob", "LOCKGATE_WORKER_TYPE=human", "LOCKGATE_SESSION=s2")},
			want: locks.Owner{Holder: "alice", HolderType: "agent", Session: "s1"}},
		{name: "then the environment", opts: session.Options{
			Getenv: envOf("LOCKGATE_WORKER=bob", "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION=s2")},
			want: locks.Owner{Holder: "bob", HolderType: "agent", Session: "s2"}},
		{name: "a human in a session named after the worker by default", opts: session.Options{As: "carol", Getenv: envOf()},
			want: locks.Owner{Holder: "carol", HolderType: "human", Session: "carol"}},
		{name: "a session made printable", opts: session.Options{As: "dave", Session: "a b/c", Getenv: envOf()},
			want: locks.Owner{Holder: "dave", HolderType: "human", Session: "a-b-c"}},
		{name: "a worker type neither human nor agent", opts: session.Options{As: "erin", WorkerType: "robot", Getenv: envOf()},
			wantErr: new(*session.UsageError)},
		{name: "a worker id with surrounding whitespace", opts: session.Options{As: " frank", Getenv: envOf()},
			wantErr: new(*session.UsageError)},
		{name: "a worker id with a control character", opts: session.Options{Getenv: envOf("LOCKGATE_WORKER=gr\x1bace")},
			wantErr: new(*session.UsageError)},
		{name: "a worker id too long", opts: session.Options{As: strings.Repeat("h", 1000), Getenv: envOf()},
			wantErr: new(*session.UsageError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := session.Owner(tt.opts)
			wantError(t, err, tt.wantErr)
			if tt.wantErr == nil && got != tt.want {
				t.Fatalf("Owner = %+v, want %+v", got, tt.want)
			}
		})
	}
}
