package service_test

import (
	"context"
	"testing"

	"github.com/lockgate/lockgate/service"
)

func TestUseAndShowStore(t *testing.T) {
	r := repoWith(t, nil)
	ctx := context.Background()
	tests := []struct {
		name string
		req  service.UseRequest
		// wantSource is where the clone's store comes from after the
		// request, wantPrevious where it came from before.
		wantKind, wantSource, wantPrevious string
		wantErr                            any
	}{
		{name: "record file", req: service.UseRequest{Store: "file"}, wantKind: service.KindFile, wantSource: service.FromClone, wantPrevious: service.FromDefault},
		{name: "unknown store", req: service.UseRequest{Store: "etcd"}, wantErr: new(*service.UsageError)},
		{name: "redis without a server", req: service.UseRequest{Store: "redis"}, wantErr: new(*service.UsageError)},
		{name: "forget", req: service.UseRequest{}, wantKind: service.KindFile, wantSource: service.FromDefault, wantPrevious: service.FromClone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := loadAs(t, r.Dir, "alice", nil)
			u, err := e.UseStore(ctx, tt.req)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			if u.Store.Kind != tt.wantKind || u.Store.Source != tt.wantSource || u.Previous.Source != tt.wantPrevious {
				t.Fatalf("store %+v (before %+v), want %s from %s (before from %s)", u.Store, u.Previous, tt.wantKind, tt.wantSource, tt.wantPrevious)
			}
			s, err := loadAs(t, r.Dir, "alice", nil).ShowStore(ctx)
			if err != nil || s.Store.Source != tt.wantSource || s.Clone.ID != s.Store.ID || (s.Recorded != nil) != (tt.wantSource == service.FromClone) {
				t.Fatalf("shown %+v, %v; want the clone's store from %s", s, err, tt.wantSource)
			}
		})
	}
}

func TestShowStoreOverride(t *testing.T) {
	r := repoWith(t, nil)
	e, err := service.Load(context.Background(), service.Options{Dir: r.Dir, As: "alice", Store: "redis://127.0.0.1:1/0",
		Getenv: func(string) string { return "" }, Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.ShowStore(context.Background())
	if err != nil || s.Store.Source != service.FromFlag || s.Store.Kind != service.KindRedis || s.Clone.Kind != service.KindFile || len(s.Warnings) != 1 || s.Prefix == "" {
		t.Fatalf("shown %+v, %v; want the flag's Redis store, a warning that the hooks read the file store, and a key prefix", s, err)
	}
}
