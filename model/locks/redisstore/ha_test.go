package redisstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

// haMaster is the master name the Sentinels of these tests monitor.
const haMaster = "lockgate"

// sentinelSet is a primary, its replicas and three Sentinels.
type sentinelSet struct {
	primary   *redistest.Server
	replicas  []*redistest.Server
	sentinels []*redistest.Server
	url       string
}

func startSentinelSet(t *testing.T, replicas int) *sentinelSet {
	t.Helper()
	h := &sentinelSet{primary: redistest.Start(t, redistest.Options{})}
	for range replicas {
		h.replicas = append(h.replicas, redistest.StartReplica(t, h.primary, redistest.Options{}))
	}
	h.sentinels = redistest.StartSentinels(t, h.primary, haMaster, 3, replicas)
	h.url = redistest.SentinelURL(haMaster, h.sentinels)
	return h
}

// dump logs the replication state and the log of every replica and
// Sentinel.
func (h *sentinelSet) dump(t *testing.T) {
	for _, r := range append(h.replicas, h.sentinels...) {
		info, err := r.Do("INFO", "replication")
		if err == nil && info == "" {
			info, err = r.Do("INFO", "sentinel")
		}
		b, _ := os.ReadFile(filepath.Join(r.Dir(), "redis.log"))
		t.Logf("%s: %v\n%s\n%s", r.Addr(), err, info, b)
	}
}

// killPrimary kills the primary with SIGKILL and returns a channel closed
// once every Sentinel names another server as the primary.
func (h *sentinelSet) killPrimary(t *testing.T) <-chan struct{} {
	t.Helper()
	old := h.primary.Addr()
	h.primary.Kill()
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			moved := 0
			for _, s := range h.sentinels {
				if addr, err := redistest.PrimaryOf(s, haMaster); err == nil && addr != old {
					moved++
				}
			}
			if moved == len(h.sentinels) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Errorf("the Sentinels did not all name a new primary within a minute of the kill")
		h.dump(t)
	}()
	return done
}

// acquireThrough acquires rec, retrying while the store is unavailable (a
// failover in progress), until it is granted or held by another, or the
// deadline passes. It returns the grant, or nil when the key is held.
func acquireThrough(t *testing.T, s *Store, rec locks.Lock, deadline time.Time) *locks.Lock {
	t.Helper()
	for {
		got, _, err := s.Acquire(context.Background(), rec, time.Now())
		var held *locks.HeldError
		var un *locks.UnavailableError
		switch {
		case err == nil:
			return &got
		case errors.As(err, &held):
			return nil
		case errors.As(err, &un):
			if time.Now().After(deadline) {
				t.Fatalf("acquire %s: still unavailable at the deadline: %v", rec.Key, err)
			}
			time.Sleep(20 * time.Millisecond)
		default:
			t.Fatalf("acquire %s: %v", rec.Key, err)
		}
	}
}

// failoverRace races workers for keys race:0…race:rounds-1 through
// Sentinel, each worker trying every key until it is granted it or finds
// it held, and kills the primary with SIGKILL once a third of the rounds
// are done. It returns the number of keys granted to more than one worker
// (a grant the failover lost, granted again) and the number of rounds.
func failoverRace(t *testing.T, minReplicas int) (doubles, rounds int) {
	h := startSentinelSet(t, 2)
	const workers = 4
	rounds = 150
	if testing.Short() {
		rounds = 60
	}
	stores := make([]*Store, workers)
	prefix := freshPrefix(t)
	for i := range stores {
		stores[i] = open(t, h.url, Options{Prefix: prefix, MinReplicas: minReplicas, OpTimeout: time.Second})
	}
	grants := make([][]string, rounds) // key -> workers granted it
	var mu sync.Mutex
	var progress atomic.Int64
	deadline := time.Now().Add(2 * time.Minute)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			holder := fmt.Sprintf("w%d", w)
			for r := range rounds {
				rec := locktest.NewLock(fmt.Sprintf("task:race-%d", r), holder, time.Now(), 10*time.Minute)
				if got := acquireThrough(t, stores[w], rec, deadline); got != nil {
					mu.Lock()
					grants[r] = append(grants[r], holder)
					mu.Unlock()
				}
				progress.Add(1)
			}
		})
	}
	for progress.Load() < int64(workers*rounds/3) {
		time.Sleep(5 * time.Millisecond)
	}
	killed := time.Now()
	promoted := h.killPrimary(t)
	go func() { <-promoted; t.Logf("promoted %s after the kill", time.Since(killed)) }()
	wg.Wait()
	<-promoted
	t.Logf("race done %s after the kill", time.Since(killed))
	for r, g := range grants {
		if len(g) > 1 {
			doubles++
			t.Logf("race-%d granted to %v", r, g)
		}
	}
	return doubles, rounds
}

// TestFailoverRaceMinReplicas1: with min_replicas 1 no key is granted
// twice when the primary is killed in the middle of a race: every grant
// reached a replica, and Sentinel promotes the replica with the most.
func TestFailoverRaceMinReplicas1(t *testing.T) {
	t.Parallel()
	doubles, rounds := failoverRace(t, 1)
	t.Logf("min_replicas 1: %d of %d keys granted twice across the failover", doubles, rounds)
	if doubles != 0 {
		t.Fatalf("min_replicas 1: %d keys granted to two workers across the failover", doubles)
	}
}

// TestFailoverRaceMinReplicas0 reports how many keys a failover granted
// twice without min_replicas: the asynchronous replica may lack the last
// grants of the primary it replaces. The count depends on timing, so it is
// reported, not asserted.
func TestFailoverRaceMinReplicas0(t *testing.T) {
	t.Parallel()
	doubles, rounds := failoverRace(t, 0)
	t.Logf("min_replicas 0: %d of %d keys granted twice across the failover", doubles, rounds)
}

// TestFailoverKeepsLocksAndFences: with min_replicas 1 a key held before
// the primary is killed is still held, with its token and fence, by the
// promoted replica; and one key acquired and released in a loop through
// the failover gets strictly increasing fences.
func TestFailoverKeepsLocksAndFences(t *testing.T) {
	t.Parallel()
	h := startSentinelSet(t, 2)
	prefix := freshPrefix(t)
	s := open(t, h.url, Options{Prefix: prefix, MinReplicas: 1, OpTimeout: time.Second})
	ctx := context.Background()
	held, _, err := s.Acquire(ctx, locktest.NewLock("db:migration-slot", "alice", time.Now(), 10*time.Minute), time.Now())
	if err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(40 * time.Second)
	t.Cleanup(func() {
		// What the servers and Sentinels did, for a failure's reader.
		if t.Failed() {
			h.dump(t)
		}
	})
	var fences []uint64
	var promoted <-chan struct{}
	var killed time.Time
	after := 0
	for after < 20 {
		// A grant whose WAIT the kill cut off is undone only if the undo
		// reaches a primary; else the promoted replica may have it, held
		// by nobody who was told so, until its TTL ends. It is taken over
		// then, with a fence above its own.
		rec := locktest.NewLock("task:fenced", "bob", time.Now(), 2*time.Second)
		got := acquireThrough(t, s, rec, deadline)
		if got == nil {
			if time.Now().After(deadline) {
				t.Fatal("task:fenced is still held at the deadline though its every grant was released")
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		fences = append(fences, got.Fence)
		// A release that fails leaves the record to the next acquisition
		// as held: release until it is gone.
		for {
			err := s.Release(ctx, got.Key, got.Token)
			if err == nil || errors.Is(err, locks.ErrNotFound) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("release through the failover: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		switch {
		case len(fences) == 10:
			killed = time.Now()
			promoted = h.killPrimary(t)
		case promoted != nil:
			select {
			case <-promoted:
				if after == 0 {
					t.Logf("first grant after the promotion %s after the kill", time.Since(killed))
				}
				after++
			default:
			}
		}
	}
	for i := 1; i < len(fences); i++ {
		if fences[i] <= fences[i-1] {
			t.Fatalf("fences not strictly increasing across the failover: %v", fences)
		}
	}

	// A store opened after the failover finds the key held as it was.
	s2 := open(t, h.url, Options{Prefix: prefix, MinReplicas: 1})
	got, err := s2.Get(ctx, held.Key)
	if err != nil {
		t.Fatalf("the lock held before the failover: %v", err)
	}
	if got.Token != held.Token || got.Fence != held.Fence || got.Holder != "alice" {
		t.Fatalf("after the failover %s is %+v, want alice's with fence %d", held.Key, got, held.Fence)
	}
	_, _, err = s2.Acquire(ctx, locktest.NewLock(held.Key, "carol", time.Now(), time.Minute), time.Now())
	var he *locks.HeldError
	if !errors.As(err, &he) || he.Lock.Token != held.Token {
		t.Fatalf("acquire of the held key after the failover: %v, want held by alice", err)
	}
}

// TestMinReplicasWithoutReplica: with min_replicas 1 and the only replica
// stopped, an acquisition fails as unavailable, says why, and leaves
// nothing held: no record, no index entry, no history.
func TestMinReplicasWithoutReplica(t *testing.T) {
	t.Parallel()
	primary := redistest.Start(t, redistest.Options{})
	replica := redistest.StartReplica(t, primary, redistest.Options{})
	prefix := freshPrefix(t)
	s := open(t, primary.URL(), Options{Prefix: prefix, MinReplicas: 1, OpTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	// A replica still syncing confirms nothing: wait until it follows.
	if err := redistest.WaitReplicated(primary, replica); err != nil {
		t.Fatal(err)
	}
	rec := locktest.NewLock("task:T-1", "alice", time.Now(), time.Minute)
	got, _, err := s.Acquire(ctx, rec, time.Now())
	if err != nil {
		t.Fatalf("acquire with the replica up: %v", err)
	}
	if err := s.Release(ctx, got.Key, got.Token); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Replicas(ctx); err != nil || n != 1 {
		t.Fatalf("Replicas with the replica up = %d, %v; want 1", n, err)
	}

	replica.Stop()
	// The primary drops the replica when its connection closes, which
	// Stop waits for; a busy machine may take a moment more.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n, err := s.Replicas(ctx)
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Replicas with the replica stopped = %d, %v; want 0", n, err)
		}
	}
	rec = locktest.NewLock("task:T-1", "alice", time.Now(), time.Minute)
	_, _, err = s.Acquire(ctx, rec, time.Now())
	var un *locks.UnavailableError
	if !errors.As(err, &un) {
		t.Fatalf("acquire with the replica stopped: %v, want unavailable", err)
	}
	if kind, reason := Classify(err); kind != KindUnavailable || reason != ReasonReplicas {
		t.Fatalf("Classify = %s/%s, want %s/%s", kind, reason, KindUnavailable, ReasonReplicas)
	}
	for _, want := range []string{"0 of the 1 replicas", "locks.redis.min_replicas", "the grant was undone", primary.Addr()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := s.Get(ctx, rec.Key); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("after the refused grant Get = %v, want not found", err)
	}
	if es, err := s.List(ctx); err != nil || len(es) != 0 {
		t.Fatalf("after the refused grant List = %v, %v; want nothing", es, err)
	}
	if h, err := raw(t, primary.URL()).HGetAll(ctx, s.histKey(rec.Session)).Result(); err != nil || len(h) != 0 {
		t.Fatalf("after the refused grant the session's history = %v, %v; want empty", h, err)
	}
	// Another worker is not in the way of a grant nobody holds.
	s0 := open(t, primary.URL(), Options{Prefix: prefix})
	if _, _, err := s0.Acquire(ctx, locktest.NewLock("task:T-1", "bob", time.Now(), time.Minute), time.Now()); err != nil {
		t.Fatalf("min_replicas 0 after the refused grant: %v", err)
	}
}

// TestSentinelConformance runs the store's conformance suite through
// Sentinel.
func TestSentinelConformance(t *testing.T) {
	t.Parallel()
	h := startSentinelSet(t, 1)
	locktest.Run(t, func(t *testing.T) locks.Store {
		s, err := Open(context.Background(), h.url, Options{Prefix: freshPrefix(t), MinReplicas: 1})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestClusterConformance runs the store's conformance suite on a
// three-primary cluster, then checks that every key a store wrote (records,
// indexes, fences, histories, rate-limit logs, the migration mark) is in
// one slot on one node.
func TestClusterConformance(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	var prefixes []string
	var mu sync.Mutex
	locktest.Run(t, func(t *testing.T) locks.Store {
		p := freshPrefix(t)
		mu.Lock()
		prefixes = append(prefixes, p)
		mu.Unlock()
		s, err := Open(context.Background(), c.URL(), Options{Prefix: p, RateLimitPerMin: 1000, HistoryTTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.Nodes[0].Addr()}})
	t.Cleanup(func() { _ = cc.Close() })
	total := 0
	for _, p := range prefixes {
		var keys []string
		nodes := 0
		err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			ks, err := n.Keys(ctx, "{"+p+"}*").Result()
			mu.Lock()
			defer mu.Unlock()
			if len(ks) > 0 {
				nodes++
			}
			keys = append(keys, ks...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if nodes > 1 {
			t.Errorf("prefix %s: keys on %d nodes", p, nodes)
		}
		total += len(keys)
		slots := map[int64]bool{}
		for _, k := range keys {
			slots[cc.ClusterKeySlot(ctx, k).Val()] = true
		}
		if len(slots) > 1 {
			t.Errorf("prefix %s: keys %v in %d slots", p, keys, len(slots))
		}
	}
	if total == 0 {
		t.Fatal("found no key of the suite's stores on the cluster")
	}
	// The cluster has no replicas: the primary of the store's slot says so.
	s, err := Open(ctx, c.URL(), Options{Prefix: freshPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Replicas(ctx); err != nil || n != 0 {
		t.Fatalf("Replicas on a cluster without replicas = %d, %v; want 0", n, err)
	}
}

// TestFailoverLostFenceNotRepeated: with min_replicas 0 a replica that
// missed the primary's last grants is promoted; the fences those grants
// had are not handed out again: the store finds a new primary and raises
// the floor above every counter by FailoverFenceGap.
func TestFailoverLostFenceNotRepeated(t *testing.T) {
	t.Parallel()
	h := startSentinelSet(t, 1)
	s := open(t, h.url, Options{OpTimeout: time.Second})
	ctx := context.Background()
	grant := func(s *Store) uint64 {
		t.Helper()
		got := acquireThrough(t, s, locktest.NewLock("task:fenced", "alice", time.Now(), time.Minute), time.Now().Add(time.Minute))
		if got == nil {
			t.Fatal("task:fenced is held though its every grant was released")
		}
		if err := s.Release(ctx, got.Key, got.Token); err != nil {
			t.Fatal(err)
		}
		return got.Fence
	}
	for range 3 {
		grant(s)
	}
	// The replica has every write so far, then misses the next grants.
	if err := redistest.WaitReplicated(h.primary, h.replicas[0]); err != nil {
		t.Fatal(err)
	}
	// Paused, the replica reads nothing more, and with its link cut the
	// primary sends nothing more: the grants below are on the primary only.
	h.replicas[0].Pause()
	if n, err := h.primary.Do("CLIENT", "KILL", "TYPE", "replica"); err != nil || n != "1" {
		t.Fatalf("cut the replica's link: %q, %v", n, err)
	}
	var lost uint64
	for range 3 {
		lost = grant(s)
	}
	promoted := h.killPrimary(t)
	h.replicas[0].Resume()
	<-promoted
	if addr, _ := redistest.PrimaryOf(h.sentinels[0], haMaster); addr != h.replicas[0].Addr() {
		t.Fatalf("primary after the failover is %s, want the replica %s", addr, h.replicas[0].Addr())
	}
	f := grant(s)
	if f <= lost {
		t.Fatalf("fence %d after the failover, not above %d, the last one the lost primary handed out", f, lost)
	}
	// A store opened later, on a connection of its own, counts on from
	// there: the floor is raised once per new primary.
	if next := grant(open(t, h.url, Options{Prefix: s.p})); next != f+1 {
		t.Fatalf("fence %d from a second store after the failover, want %d", next, f+1)
	}
}

// A restore whose grant too few replicas confirm is undone, and leaves the
// session's history as it was: run again with the replicas back, it
// restores the lock (the undone grant's fence does not count as another
// holder's).
func TestRestoreRefusedByReplicasKeepsHistory(t *testing.T) {
	t.Parallel()
	primary := redistest.Start(t, redistest.Options{})
	replica := redistest.StartReplica(t, primary, redistest.Options{})
	prefix := freshPrefix(t)
	s := open(t, primary.URL(), Options{Prefix: prefix, MinReplicas: 1, OpTimeout: 300 * time.Millisecond})
	s0 := open(t, primary.URL(), Options{Prefix: prefix})
	ctx := context.Background()
	got, _, err := s0.Acquire(ctx, lockFor("src/x.py", "alice", time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The record is gone (Redis dropped it), its history entry stays.
	if err := raw(t, primary.URL()).Del(ctx, s.recKey(s.id(got.Key))).Err(); err != nil {
		t.Fatal(err)
	}
	replica.Stop()
	acquire := func(st *Store) func(context.Context, RestoreRequest) error {
		return func(ctx context.Context, req RestoreRequest) error {
			_, _, err := st.Acquire(ctx, lockFor(req.Lock.Key, "alice", req.TTL), time.Now())
			return err
		}
	}
	res, err := s.Restore(ctx, "alice", acquire(s))
	if kind, reason := Classify(err); kind != KindUnavailable || reason != ReasonReplicas {
		t.Fatalf("restore with the replica stopped = %+v, %v; want %s", res, err, ReasonReplicas)
	}
	if h := historyKeys(t, s, "alice"); !slices.Equal(h, []string{"src/x.py"}) {
		t.Fatalf("history after the refused restore = %q, want src/x.py", h)
	}
	// The replica back (here: a store that needs none), the lock is restored.
	res, err = s0.Restore(ctx, "alice", acquire(s0))
	if err != nil || !slices.Equal(res.Restored, []string{"src/x.py"}) || len(res.Skipped) != 0 {
		t.Fatalf("restore after the refusal = %+v, %v; want src/x.py restored", res, err)
	}
}

// TestSentinelErrorsNameTheServer: a failure through Sentinel says which
// server failed in which role: the primary the Sentinels named, or the
// Sentinels themselves; a master name the Sentinels do not know is a
// configuration error naming them, not an outage.
func TestSentinelErrorsNameTheServer(t *testing.T) {
	t.Parallel()
	h := startSentinelSet(t, 0)
	ctx := context.Background()

	_, err := Open(ctx, redistest.SentinelURL("nosuch", h.sentinels), Options{})
	var unknown *UnknownMasterError
	if !errors.As(err, &unknown) || len(unknown.Sentinels) != len(h.sentinels) {
		t.Fatalf("Open with an unknown master name: %v, want an *UnknownMasterError naming every Sentinel", err)
	}
	var un *locks.UnavailableError
	if errors.As(err, &un) {
		t.Errorf("an unknown master name is unavailable: %v", err)
	}
	for _, want := range append([]string{`know no master "nosuch"`}, h.sentinels[0].Addr(), h.sentinels[2].Addr()) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	h.primary.Kill()
	_, err = Open(ctx, h.url, Options{})
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "open: primary "+h.primary.Addr()+" (master "+haMaster+"): connection refused") {
		t.Errorf("Open with the primary killed: %v, want unavailable naming the primary %s", err, h.primary.Addr())
	}

	for _, s := range h.sentinels {
		s.Kill()
	}
	_, err = Open(ctx, h.url, Options{})
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "open: sentinels ") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Open with every Sentinel down: %v, want unavailable naming the sentinels", err)
	}
	for _, s := range h.sentinels {
		if !strings.Contains(err.Error(), s.Addr()) {
			t.Errorf("error %q does not name the sentinel %s", err, s.Addr())
		}
	}
}

// TestClusterErrorNamesTheNode: with the node that keeps a store's keys
// down, opening the store names that node.
func TestClusterErrorNamesTheNode(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3)
	ctx := context.Background()
	prefix := freshPrefix(t)
	s := open(t, c.URL(), Options{Prefix: prefix})
	home, err := s.home(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addr := home.Options().Addr
	for _, n := range c.Nodes {
		if n.Addr() == addr {
			n.Kill()
		}
	}
	_, err = Open(ctx, c.URL(), Options{Prefix: prefix})
	var un *locks.UnavailableError
	if !errors.As(err, &un) || !strings.Contains(err.Error(), "open: cluster node "+addr+": connection refused") {
		t.Fatalf("Open with the node of the store's slot down: %v, want unavailable naming the cluster node %s", err, addr)
	}
}
