package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/redistest"
)

// sentinelSet is a primary with one replica behind three Sentinels, and
// the store's URL through them.
type sentinelSet struct {
	primary, replica *redistest.Server
	sentinels        []*redistest.Server
	url              string
}

// sentinelClone starts a sentinelSet and a clone that commits path with
// content and uses the set as its store.
func sentinelClone(t *testing.T, path, content string) (*cliRepo, sentinelSet) {
	t.Helper()
	var h sentinelSet
	h.primary = redistest.Start(t, redistest.Options{})
	h.replica = redistest.StartReplica(t, h.primary, redistest.Options{})
	h.sentinels = redistest.StartSentinels(t, h.primary, "lockgate", 3, 1)
	h.url = redistest.SentinelURL("lockgate", h.sentinels)
	c := newCLIRepo(t)
	c.repo.Write(path, content)
	c.repo.Commit("add " + path)
	if code, out := c.run("alice", "store", "use", h.url); code != 0 {
		t.Fatalf("store use %s: %d %s", h.url, code, out)
	}
	return c, h
}

// TestSentinelNoPrimaryFailsClosed: through Sentinel, with no primary
// reachable (the primary and its only replica are down), the pre-commit
// hook and lock acquire fail with exit 3 and name the store.
func TestSentinelNoPrimaryFailsClosed(t *testing.T) {
	t.Parallel()
	c, h := sentinelClone(t, "src/a.go", "a\n")
	primary, replica, sentinels, url := h.primary, h.replica, h.sentinels, h.url
	if code, out := c.run("alice", "lock", "acquire", "src/a.go"); code != 0 {
		t.Fatalf("acquire through Sentinel: %d %s", code, out)
	}
	c.repo.Write("src/a.go", "b\n")
	c.repo.Git("add", "src/a.go")
	// With the primary up the hook judges: bob's change touches alice's
	// lock.
	if code, out := c.run("bob", "hook", "pre-commit"); code != 1 || !strings.Contains(out, "alice") {
		t.Fatalf("hook pre-commit with the primary up: %d %s; want 1 naming alice", code, out)
	}
	// A master name the Sentinels do not know is a configuration error
	// (exit 2) that names them.
	nosuch := redistest.SentinelURL("nosuch", sentinels)
	if code, out := c.run("bob", "--store", nosuch, "lock", "list"); code != 2 || !strings.Contains(out, "the sentinels at "+sentinels[0].Addr()) || !strings.Contains(out, `know no master "nosuch"`) {
		t.Errorf("lock list through Sentinel with an unknown master name: %d %s; want 2, the sentinels know no master nosuch", code, out)
	}
	replica.Kill()
	primary.Kill()
	for _, args := range [][]string{{"hook", "pre-commit"}, {"lock", "acquire", "src/b.go"}} {
		code, out := c.run("bob", args...)
		t.Logf("%s: %s", args, out)
		if code != 3 {
			t.Errorf("%s with no primary: exit %d, want 3: %s", args, code, out)
		}
		if !strings.Contains(out, "unavailable") || !strings.Contains(out, "redis+sentinel://"+sentinels[0].Addr()) {
			t.Errorf("%s: %q does not say the store %s is unavailable", args, out, url)
		}
		if !strings.Contains(out, "primary "+primary.Addr()) {
			t.Errorf("%s: %q does not name the primary %s that failed", args, out, primary.Addr())
		}
	}
	// store show, which counts the replicas min_replicas asks for, says
	// the same of a master name the Sentinels do not know: exit 2.
	c.repo.Write(".lockgate.yaml", "version: 1\nlocks:\n  redis:\n    min_replicas: 1\n")
	c.repo.Commit("min_replicas")
	if code, out := c.run("bob", "--store", nosuch, "store", "show"); code != 2 || !strings.Contains(out, `know no master "nosuch"`) {
		t.Errorf("store show through Sentinel with an unknown master name: %d %s; want 2, the sentinels know no master nosuch", code, out)
	}
}

// TestMinReplicasRefusesUnconfirmedGrant: with locks.redis.min_replicas 1
// and the only replica stopped, lock acquire exits 3 saying too few
// replicas confirmed, and the lock is not held afterwards.
func TestMinReplicasRefusesUnconfirmedGrant(t *testing.T) {
	t.Parallel()
	primary := redistest.Start(t, redistest.Options{})
	replica := redistest.StartReplica(t, primary, redistest.Options{})
	c := newCLIRepo(t)
	c.repo.Write(".lockgate.yaml", "version: 1\nlocks:\n  redis:\n    min_replicas: 1\n")
	c.repo.Commit("policy")
	if code, out := c.run("alice", "store", "use", primary.URL()); code != 0 {
		t.Fatalf("store use: %d %s", code, out)
	}
	if code, out := c.run("alice", "lock", "acquire", "a.py"); code != 0 {
		t.Fatalf("acquire with the replica up: %d %s", code, out)
	}
	if code, out := c.run("alice", "store", "show"); code != 0 || !strings.Contains(out, "replicas: 1 connected (locks.redis.min_replicas: 1)") || strings.Contains(out, "warning") {
		t.Errorf("store show with the replica up: %d %s; want 1 replica against min_replicas 1, no warning", code, out)
	}
	replica.Stop()
	code, out := c.run("alice", "lock", "acquire", "b.py")
	if code != 3 {
		t.Fatalf("acquire with the replica stopped: exit %d, want 3: %s", code, out)
	}
	for _, want := range []string{"too few replicas confirmed the grant", "locks.redis.min_replicas", "undone",
		"hint: bring a replica of the primary back (store show counts them), or lower locks.redis.min_replicas"} {
		if !strings.Contains(out, want) {
			t.Errorf("acquire with the replica stopped: %q does not say %q", out, want)
		}
	}
	t.Logf("refused: %s", out)
	// store show counts the replicas against min_replicas, so the cost is
	// visible before an acquisition pays it.
	code, out = c.run("alice", "store", "show")
	if code != 0 || !strings.Contains(out, "replicas: 0 connected (locks.redis.min_replicas: 1)") ||
		!strings.Contains(out, "has 0 replicas connected, fewer than locks.redis.min_replicas (1)") {
		t.Errorf("store show with the replica stopped: %d %s; want 0 replicas against min_replicas 1, and a warning", code, out)
	}
	code, out = c.run("alice", "lock", "list")
	if code != 0 || strings.Contains(out, "b.py") || !strings.Contains(out, "a.py") {
		t.Fatalf("lock list after the refused grant: %d %s; want a.py only", code, out)
	}
}

// TestSentinelFailoverUnderLockHold: `lock hold` through Sentinel rides
// out the SIGKILL of the primary. The grant, confirmed by the replica
// (min_replicas 1), is on the replica Sentinel promotes; the renewals that
// fail while no primary answers are tried again and reach it; CMD runs to
// its end and its exit 0 is the command's; alice holds the lock
// throughout, and it is given back after.
func TestSentinelFailoverUnderLockHold(t *testing.T) {
	t.Parallel()
	c, h := sentinelClone(t, ".lockgate.yaml", "version: 1\nlocks:\n  redis:\n    min_replicas: 1\n")
	primary, replica, sentinels := h.primary, h.replica, h.sentinels
	// A 20s lock is renewed every 6-7s: an outage of several seconds
	// meets a renewal or delays the next, and stays well within the TTL.
	cmd := c.cmd("alice", "lock", "hold", "a.py", "--ttl", "20s", "--",
		"sh", "-c", "touch started; until [ -e finish ]; do sleep 0.1; done")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var holdErr error
	exited := make(chan struct{})
	go func() { holdErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	waitFile(t, filepath.Join(c.repo.Dir, "started"))

	// held is alice's lock on a.py as the store (its current primary)
	// shows it; a lock list that fails (no primary yet) is nil, nil.
	held := func() (*time.Time, error) {
		code, list := c.run("bob", "lock", "list", "--json")
		if code != 0 {
			return nil, nil
		}
		var ls []struct {
			Key, Holder string
			ExpiresAt   time.Time `json:"expires_at"`
		}
		if err := json.Unmarshal([]byte(list), &ls); err != nil {
			return nil, fmt.Errorf("lock list --json: %v: %s", err, list)
		}
		for _, l := range ls {
			if l.Key == "a.py" && l.Holder == "alice" {
				return &l.ExpiresAt, nil
			}
		}
		return nil, fmt.Errorf("a.py is not held by alice: %s", list)
	}
	before, err := held()
	if err != nil || before == nil {
		t.Fatalf("before the failover: %v, %v", before, err)
	}
	primary.Kill()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no renewal of a.py reached the promoted replica %s in 90s\n%s", replica.Addr(), &out)
		}
		select {
		case <-exited:
			t.Fatalf("lock hold ended during the failover: %v\n%s", holdErr, &out)
		case <-time.After(200 * time.Millisecond):
		}
		now, err := primaryOfAll(sentinels)
		if err != nil || now != replica.Addr() {
			continue // not promoted yet
		}
		exp, err := held()
		if err != nil {
			t.Fatalf("after the promotion: %v\n%s", err, &out)
		}
		if exp != nil && exp.After(*before) {
			break // renewed on the promoted replica
		}
	}
	if err := os.WriteFile(filepath.Join(c.repo.Dir, "finish"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-exited
	if holdErr != nil {
		t.Fatalf("lock hold: %v, want CMD's exit 0\n%s", holdErr, &out)
	}
	t.Logf("lock hold through the failover:\n%s", &out)
	if exp, err := held(); exp != nil || err == nil {
		t.Errorf("after the hold a.py is still held (expiry %v, %v)", exp, err)
	}
}

// primaryOfAll is the primary every one of sentinels names, or an error
// while they disagree.
func primaryOfAll(sentinels []*redistest.Server) (string, error) {
	var first string
	for i, s := range sentinels {
		p, err := redistest.PrimaryOf(s, "lockgate")
		if err != nil {
			return "", err
		}
		if i == 0 {
			first = p
		} else if p != first {
			return "", fmt.Errorf("sentinels disagree: %s and %s", first, p)
		}
	}
	return first, nil
}
