package service_test

import (
	"context"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

// envOf is an environment of the variables vars names (KEY=VALUE).

func TestActAs(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// fromArguments sets mcp.identity_from_arguments.
		fromArguments bool
		id            service.Identity
		want          locks.Owner
		wantErr       any
	}{
		{name: "no identity keeps the server's", id: service.Identity{},
			want: locks.Owner{Holder: "server", HolderType: "human", Session: "server"}},
		{name: "the server's own identity named", id: service.Identity{Worker: "server", WorkerType: "human", Session: "server"},
			want: locks.Owner{Holder: "server", HolderType: "human", Session: "server"}},
		{name: "another worker, not allowed", id: service.Identity{Worker: "bob"}, wantErr: new(*service.IdentityError)},
		{name: "another session, not allowed", id: service.Identity{Session: "other"}, wantErr: new(*service.IdentityError)},
		{name: "another worker in a session named after it", fromArguments: true, id: service.Identity{Worker: "bob"},
			want: locks.Owner{Holder: "bob", HolderType: "human", Session: "bob"}},
		{name: "another worker type and session", fromArguments: true, id: service.Identity{WorkerType: "agent", Session: "run 7"},
			want: locks.Owner{Holder: "server", HolderType: "agent", Session: "run-7"}},
		{name: "a worker type neither human nor agent", fromArguments: true, id: service.Identity{WorkerType: "robot"},
			wantErr: new(*service.UsageError)},
		{name: "a worker id that would print as something else", fromArguments: true, id: service.Identity{Worker: "bob\u202e"},
			wantErr: new(*service.UsageError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := "workflow: {auto_commit: false}\n"
			if tt.fromArguments {
				policy += "mcp: {identity_from_arguments: true}\n"
			}
			r := repoWith(t, map[string]string{".lockgate.yaml": policy})
			server := openAs(t, r.Dir, "server", nil)
			e, err := server.ActAs(tt.id)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			if got := e.Owner(); got != tt.want {
				t.Fatalf("acts as %+v, want %+v", got, tt.want)
			}
			if server.Owner().Holder != "server" {
				t.Fatalf("the server became %+v", server.Owner())
			}
			// The copy shares the server's store: its lock is the server's to see.
			res, err := e.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"api:GET /acting"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Locks[0].Lock.Holder != tt.want.Holder {
				t.Fatalf("lock taken as %s, want %s", res.Locks[0].Lock.Holder, tt.want.Holder)
			}
			list, err := server.Locks().List(ctx, lockops.ListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if live := list.Live(); len(live) != 1 || live[0].Key != "api:GET /acting" {
				t.Fatalf("the server lists %+v, want the copy's lock", live)
			}
		})
	}
}
