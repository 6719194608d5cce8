package service

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/lockops"
)

// asType is f's workspace of worker, of worker type typ, its store open.
func (f *lockFixture) asType(worker, typ string) *Workspace {
	f.t.Helper()
	ctx := context.Background()
	e, err := Load(ctx, Options{Dir: f.repo.Dir, As: worker, WorkerType: typ, Session: worker,
		Clock: f.clock.Now, Getenv: func(string) string { return "" }})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(e.Close)
	if err := e.Open(ctx, Purpose{TakesLocks: true}); err != nil {
		f.t.Fatal(err)
	}
	return e
}

// refusedBy checks that err is a *lockops.ForceRefusedError of rule.
func refusedBy(t *testing.T, err error, rule string) {
	t.Helper()
	var fe *lockops.ForceRefusedError
	if !errors.As(err, &fe) || fe.Rule != rule {
		t.Fatalf("error %v (%T), want a refusal by rule %s", err, err, rule)
	}
}

// TestAgentsDoNotForcePeoplesLocks: an agent's forced removal of a lock a
// person holds is refused, by every command that forces (clear, release,
// unpause, ports release) and on the web board, and leaves the lock; a
// person forces an agent's lock, and an agent another agent's. With
// locks.agents_clear_human in the worktree's policy alone the agent is
// still refused: it holds only once committed.
func TestAgentsDoNotForcePeoplesLocks(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	alice, bot, bot2 := f.asType("alice", "human"), f.asType("bot", "agent"), f.asType("bot2", "agent")
	f.take(alice, "src/a.go", "env:staging")
	if _, err := alice.Locks().Pause(ctx, lockops.PauseRequest{Feature: "FEAT-1"}); err != nil {
		t.Fatal(err)
	}
	port, err := alice.Locks().AllocatePorts(ctx, lockops.PortsRequest{Count: 1})
	if err != nil || len(port) != 1 {
		t.Fatalf("ports allocate: %v, %v", port, err)
	}

	_, err = bot.Locks().Clear(ctx, lockops.ClearRequest{Target: "src/a.go", Force: true})
	refusedBy(t, err, lockops.ForceRuleAgentsClearHuman)
	_, err = bot.Locks().Release(ctx, lockops.ReleaseRequest{Keys: []string{"src/a.go", "env:staging"}, Force: true})
	refusedBy(t, err, lockops.ForceRuleAgentsClearHuman)
	_, err = bot.Locks().Unpause(ctx, lockops.UnpauseRequest{Feature: "FEAT-1", Force: true})
	refusedBy(t, err, lockops.ForceRuleAgentsClearHuman)
	_, err = bot.Locks().ReleasePorts(ctx, lockops.PortsReleaseRequest{Ports: []string{strings.TrimPrefix(port[0].Key, lockops.PortNS+":")}, Force: true})
	refusedBy(t, err, lockops.ForceRuleAgentsClearHuman)
	refusedBy(t, bot.Board().Clear(ctx, "env:staging"), lockops.ForceRuleAgentsClearHuman)
	pause, err := alice.Locks().PauseKey("FEAT-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"src/a.go", "env:staging", pause, port[0].Key} {
		if l, err := alice.Store.Get(ctx, key); err != nil || l.Holder != "alice" {
			t.Errorf("after the refusals, %s: %+v, %v; want alice's lock", key, l, err)
		}
	}

	// A person forces an agent's lock; an agent another agent's.
	f.take(bot2, "src/b.go", "src/c.go")
	if _, err := alice.Locks().Clear(ctx, lockops.ClearRequest{Target: "src/b.go", Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := bot.Locks().Release(ctx, lockops.ReleaseRequest{Keys: []string{"src/c.go"}, Force: true}); err != nil {
		t.Fatal(err)
	}

	// The worktree's policy alone does not let the agent.
	f.repo.Write(".lockgate.yaml", lockPolicy+"locks: {agents_clear_human: true}\n")
	_, err = f.asType("bot", "agent").Locks().Clear(ctx, lockops.ClearRequest{Target: "src/a.go", Force: true})
	refusedBy(t, err, lockops.ForceRuleAgentsClearHuman)
	f.repo.Commit("agents may clear people's locks")
	res, err := f.asType("bot", "agent").Locks().Clear(ctx, lockops.ClearRequest{Target: "src/a.go", Force: true})
	if err != nil || res.Cleared == nil || res.Cleared.Holder != "alice" {
		t.Fatalf("with the policy committed: %+v, %v", res, err)
	}
}

// TestServeForceNeedsAnAdmin: a user of lockgate serve forces another
// user's lock only as an admin; its own it forces as it likes.
func TestServeForceNeedsAnAdmin(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	alice, bob := lfsUser(t, f, "alice", "human"), lfsUser(t, f, "bob", "human")
	root, err := f.as("server").As(ServeUser{Name: "root", Type: "human", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	f.take(alice, "src/a.go")
	f.take(bob, "src/b.go")
	_, err = bob.Locks().Clear(ctx, lockops.ClearRequest{Target: "src/a.go", Force: true})
	refusedBy(t, err, lockops.ForceRuleAdmin)
	_, err = bob.Locks().Release(ctx, lockops.ReleaseRequest{Keys: []string{"src/a.go"}, Force: true})
	refusedBy(t, err, lockops.ForceRuleAdmin)
	if _, err := bob.Locks().Clear(ctx, lockops.ClearRequest{Target: "src/b.go", Force: true}); err != nil {
		t.Fatalf("bob forcing his own lock: %v", err)
	}
	if _, err := root.Locks().Clear(ctx, lockops.ClearRequest{Target: "src/a.go", Force: true}); err != nil {
		t.Fatalf("the admin's clear: %v", err)
	}
	if rows, err := alice.Locks().List(ctx, lockops.ListRequest{}); err != nil || len(rows.Rows) != 0 {
		t.Fatalf("left: %+v, %v", rows.Rows, err)
	}
}

// TestClearRemovesTheLockJudged: a clear judged on one lock removes that
// lock only: a lock taken meanwhile (another grant, another token) is
// left alone and the clear fails.
func TestClearRemovesTheLockJudged(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	alice, bot := f.asType("alice", "human"), f.asType("bot", "agent")
	f.take(bot, "src/a.go")
	regrant := func(locks.Lock) error {
		// Between the judging and the removal, the lock ends and a
		// person takes the key.
		if _, err := bot.Locks().Release(ctx, lockops.ReleaseRequest{Keys: []string{"src/a.go"}}); err != nil {
			t.Fatal(err)
		}
		f.take(alice, "src/a.go")
		return nil
	}
	if _, err := bot.Mgr.ClearChecked(ctx, "src/a.go", f.asType("bot2", "agent").Me, regrant); err == nil {
		t.Fatal("the clear removed a lock it did not judge")
	}
	if rows, err := alice.Locks().List(ctx, lockops.ListRequest{}); err != nil || len(rows.Rows) != 1 || rows.Rows[0].Holder != "alice" {
		t.Fatalf("left: %+v, %v; want alice's lock", rows.Rows, err)
	}
}
