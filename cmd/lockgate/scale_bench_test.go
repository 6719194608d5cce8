package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
	"github.com/lockgate/lockgate/model/locks/gitstore"
	"github.com/lockgate/lockgate/model/locks/record"
	"github.com/lockgate/lockgate/service"
)

// The scale benchmark: what lockgate's everyday commands cost as the lock
// history grows, on every store, each size's figure as a ratio to the
// smallest size's. A history of n lock operations is n/2 acquisitions, each
// released again, by eight other workers, one operation every
// scaleStep, the last scaleQuiet ago; on top of it scaleLive locks of
// another worker are live, so that every size has the same live table and
// about the same events in the last hour. Only the history differs.
const (
	scaleStep  = 36 * time.Second
	scaleQuiet = 5 * time.Minute
	scaleLive  = 100
	// scaleSyncEvery is how many acquisitions (each with its release) of
	// the history go by between two commits of the journal to the
	// workflow branch.
	scaleSyncEvery = 500
	// scaleCommits is the range `verify` judges: the newest commits of
	// main, made within the last hour, after the history began.
	scaleCommits = 100
)

// scaleEnv reads a comma-separated list from the environment, or def.
func scaleEnv(name, def string) []string {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	return strings.Split(v, ",")
}

// BenchmarkScale prints one markdown table: the costs of the commands a
// clone runs every day, at histories of 10^3, 10^4 and 10^5 lock
// operations, on the file store, the git store and Redis, each as a ratio
// to the 10^3 figure. Run it once (-benchtime 1x); it takes most of an
// hour, seeding the 10^5 histories.
// LOCKGATE_BENCH_SCALE_SIZES (default 1000,10000,100000),
// LOCKGATE_BENCH_SCALE_STORES (default file,git,redis) and
// LOCKGATE_BENCH_SCALE_RUNS (timed runs per figure, default 5) change it;
// LOCKGATE_BENCH_SCALE_GIT_SEED=store writes the git store's history with
// the store's own code, a push per operation, instead of git fast-import
// (to compare the two at a small size).
func BenchmarkScale(b *testing.B) {
	var sizes []int
	for _, s := range scaleEnv("LOCKGATE_BENCH_SCALE_SIZES", "1000,10000,100000") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2*scaleLive {
			b.Fatalf("LOCKGATE_BENCH_SCALE_SIZES: %q is not a size of at least %d", s, 2*scaleLive)
		}
		sizes = append(sizes, n)
	}
	runs := 5
	if v := os.Getenv("LOCKGATE_BENCH_SCALE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("LOCKGATE_BENCH_SCALE_RUNS: %q is not a positive number", v)
		}
		runs = n
	}
	stores := scaleEnv("LOCKGATE_BENCH_SCALE_STORES", "file,git,redis")
	for _, s := range stores {
		if s != "file" && s != "git" && s != "redis" {
			b.Fatalf("LOCKGATE_BENCH_SCALE_STORES: %q is not file, git or redis", s)
		}
	}
	bin := lockgateBinary(b)
	tab := &scaleTable{sizes: sizes}
	start := time.Now()
	for range b.N {
		for _, store := range stores {
			for _, n := range sizes {
				b.Run(fmt.Sprintf("%s/n=%d", store, n), func(b *testing.B) {
					f := newScaleFixture(b, bin, store, n)
					f.measure(b, tab, runs)
				})
			}
		}
	}
	b.StopTimer()
	fmt.Printf("\n%s\nWhole run: %s (%d stores × %d sizes, %d timed runs per figure).\n",
		tab.markdown(), time.Since(start).Round(time.Second), len(stores), len(sizes), runs)
}

// scaleTable gathers the figures, row by row in the order they were first
// measured.
type scaleTable struct {
	sizes []int
	rows  []*scaleRow
	notes []string
}

func (t *scaleTable) note(s string) { t.notes = append(t.notes, s) }

type scaleRow struct {
	what, store, unit string
	// ratio: the row's figures compare (a count of ops or a time), not
	// the seeding's own time.
	ratio bool
	at    map[int]float64
}

func (t *scaleTable) put(what, store, unit string, ratio bool, n int, v float64) {
	for _, r := range t.rows {
		if r.what == what && r.store == store {
			r.at[n] = v
			return
		}
	}
	t.rows = append(t.rows, &scaleRow{what: what, store: store, unit: unit, ratio: ratio, at: map[int]float64{n: v}})
}

// markdown is the table: one column per size, and beside every size but
// the first its ratio to the first.
func (t *scaleTable) markdown() string {
	var sb strings.Builder
	sb.WriteString("| what | store |")
	sep := "|---|---|"
	for i, n := range t.sizes {
		fmt.Fprintf(&sb, " %s |", sizeName(n))
		sep += "---:|"
		if i > 0 {
			fmt.Fprintf(&sb, " × %s |", sizeName(t.sizes[0]))
			sep += "---:|"
		}
	}
	sb.WriteString("\n" + sep + "\n")
	for _, r := range t.rows {
		fmt.Fprintf(&sb, "| %s | %s |", r.what, r.store)
		first, hasFirst := r.at[t.sizes[0]]
		for i, n := range t.sizes {
			v, ok := r.at[n]
			if !ok {
				sb.WriteString(" — |")
			} else {
				fmt.Fprintf(&sb, " %s |", formatFigure(v, r.unit))
			}
			if i == 0 {
				continue
			}
			if ok && hasFirst && r.ratio && first > 0 {
				fmt.Fprintf(&sb, " %.2f× |", v/first)
			} else {
				sb.WriteString(" |")
			}
		}
		sb.WriteString("\n")
	}
	if len(t.notes) > 0 {
		sb.WriteString("\n")
		for _, n := range t.notes {
			sb.WriteString("- " + n + "\n")
		}
	}
	return sb.String()
}

func sizeName(n int) string {
	s := strconv.Itoa(n)
	if z := len(s) - len(strings.TrimRight(s, "0")); z >= 3 && strings.TrimRight(s, "0") == "1" {
		return fmt.Sprintf("10^%d ops", z)
	}
	return s + " ops"
}

func formatFigure(v float64, unit string) string {
	switch unit {
	case "ms":
		if v >= 100 {
			return fmt.Sprintf("%.0f ms", v)
		}
		return fmt.Sprintf("%.1f ms", v)
	case "s":
		return fmt.Sprintf("%.1f s", v)
	case "B":
		switch {
		case v >= 1<<20:
			return fmt.Sprintf("%.1f MiB", v/(1<<20))
		case v >= 1<<10:
			return fmt.Sprintf("%.1f KiB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// scaleFixture is one store with a history of n operations: the clone the
// commands run in (its journal and workflow branch hold the history), and
// for the git store the bare remote it shares.
type scaleFixture struct {
	bin, store string
	n          int
	repo       *gittest.Repo
	env        []string
	remote     string // git store: the bare remote
	seeded     time.Duration
	how        string // how the lock table's history was written
}

// scaleConfig is the committed policy of each store's clone: the defaults
// but the store.
var scaleConfig = map[string]string{
	"file":  "version: 1\n",
	"git":   "version: 1\nlocks: {store: git}\n",
	"redis": "version: 1\nlocks: {store: redis}\n",
}

func newScaleFixture(b *testing.B, bin, store string, n int) *scaleFixture {
	ctx := context.Background()
	f := &scaleFixture{bin: bin, store: store, n: n}
	r := gittest.New(b)
	f.repo = r
	waitGC(b, filepath.Join(r.Dir, ".git"))
	r.Write(".lockgate.yaml", scaleConfig[store])
	r.Write("README.md", "scale\n")
	r.Commit("init")
	f.env = append(slices.Clone(r.Env), "LOCKGATE_WORKER=bench", "LOCKGATE_WORKER_TYPE=agent")
	switch store {
	case "git":
		f.remote = filepath.Join(b.TempDir(), "remote.git")
		waitGC(b, f.remote)
		if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", f.remote).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v: %s", err, out)
		}
		r.Git("remote", "add", "origin", f.remote)
		r.Git("push", "-q", "origin", "main")
	case "redis":
		srv := redistest.Start(b, redistest.Options{})
		f.env = append(f.env, "LOCK_REDIS_URL="+srv.URL())
	}
	getenv := func(k string) string {
		for i := len(f.env) - 1; i >= 0; i-- {
			if name, v, _ := strings.Cut(f.env[i], "="); name == k {
				return v
			}
		}
		return ""
	}
	// The history's clock: operation i happens at end - (n-1-i)·step.
	end := time.Now().Add(-scaleQuiet)
	var at time.Time
	clock := func() time.Time { return at }
	start := time.Now()
	openWS := func() *service.Workspace {
		ws, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "other", WorkerType: "agent", Getenv: getenv, Clock: time.Now})
		if err != nil {
			b.Fatal(err)
		}
		if err := ws.Open(ctx, service.Purpose{TakesLocks: true}); err != nil {
			ws.Close()
			b.Fatal(err)
		}
		return ws
	}
	ws := openWS()
	defer func() { ws.Close() }() // the workspace open at the end
	store0 := ws.LockStore()
	var chain *refChain
	if store == "git" && os.Getenv("LOCKGATE_BENCH_SCALE_GIT_SEED") != "store" {
		// A push per operation would take hours at 10^5: the history runs
		// on a file store of its own, and what the git store would have
		// written for each operation goes to the remote's ref with git
		// fast-import, in the layout probeGitLayout found the store's
		// own code writes. The live locks are then taken by the store's
		// own code, on top of that history.
		withParents, extra := probeGitLayout(b)
		chain = &refChain{Store: newScratchStore(b), withParents: withParents, extra: extra}
		store0 = chain
	}
	m := &locks.Manager{Store: store0, Events: ws.JournalFile(), Now: clock, Host: "bench", PID: os.Getpid(), StoreName: ws.StoreName()}
	for j := range n / 2 {
		who := locks.Owner{Holder: fmt.Sprintf("other-%d", j%8), HolderType: "agent", Session: fmt.Sprintf("other-%d", j%8)}
		key := fmt.Sprintf("hist/d%03d/f%06d.go", j%1000, j)
		at = end.Add(-time.Duration(n-1-2*j) * scaleStep)
		if _, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: who, TTL: time.Hour, Reason: "history"}); err != nil {
			b.Fatalf("seed acquire %d: %v", j, err)
		}
		at = at.Add(scaleStep)
		if _, err := m.Release(ctx, []string{key}, who, false); err != nil {
			b.Fatalf("seed release %d: %v", j, err)
		}
		// The journal goes to the workflow branch as the history is
		// made, as a clone's commands commit it, so that the journal is
		// rotated as it would be in use (not one segment of the whole
		// history).
		if j%scaleSyncEvery == scaleSyncEvery-1 {
			if _, err := ws.SyncWorkflow(ctx, service.SyncRequest{NoPush: true}); err != nil {
				b.Fatalf("workflow sync after %d operations: %v", 2*(j+1), err)
			}
		}
	}
	f.how = "the store's own code"
	if store == "git" && chain == nil {
		f.how = "the store's own code, a push per change"
	}
	if chain != nil {
		f.how = chain.write(b, f.remote)
		// The clone saw no state of the ref yet: forget the one the
		// workspace may have cached from the empty remote.
		if err := os.RemoveAll(filepath.Join(r.Dir, ".git", "lockgate", "cache")); err != nil {
			b.Fatal(err)
		}
		ws.Close()
		ws = openWS()
	}
	// The live locks, now, through the clone's store.
	live := &locks.Manager{Store: ws.LockStore(), Events: ws.JournalFile(), Host: "bench", PID: os.Getpid(), StoreName: ws.StoreName()}
	var keys []string
	for i := range scaleLive {
		keys = append(keys, fmt.Sprintf("live/f%03d.go", i))
	}
	other := locks.Owner{Holder: "other", HolderType: "agent", Session: "other"}
	res, err := live.Acquire(ctx, locks.Request{Keys: keys, Owner: other, TTL: 24 * time.Hour, Reason: "live"})
	if err != nil {
		b.Fatalf("live locks: %v", err)
	}
	// The git store's one fence counter continues from the history's
	// last fence: the store read the seeded ref.
	if fence := res[0].Lock.Fence; chain != nil && fence <= chain.fence {
		b.Fatalf("git store: the live locks got fence %d, not above the %d of the history: the store did not read the seeded ref", fence, chain.fence)
	}
	entries, err := ws.LockStore().List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if e.Err != nil {
			b.Fatalf("%s store: record %s after seeding: %v", store, e.Lock.Key, e.Err)
		}
	}
	if len(entries) != scaleLive {
		b.Fatalf("%s store: %d records after seeding, want the %d live ones", store, len(entries), scaleLive)
	}
	// The journal's events to the workflow branch, as `workflow sync`
	// commits them (and, on the git store, pushes them).
	if _, err := ws.SyncWorkflow(ctx, service.SyncRequest{Push: store == "git", NoPush: store != "git"}); err != nil {
		b.Fatalf("workflow sync: %v", err)
	}
	f.commitRange(b)
	if store == "git" {
		r.Git("push", "-q", "origin", "main")
		// A served repository is packed from time to time (receive-pack's
		// gc --auto); measure every size packed.
		if out, err := exec.Command("git", "-C", f.remote, "repack", "-adq").CombinedOutput(); err != nil {
			b.Fatalf("repack: %v: %s", err, out)
		}
	}
	f.seeded = time.Since(start)
	f.keep(b)
	return f
}

// keep copies the seeded clone (and the git store's remote, which the copy
// then names as origin) to $LOCKGATE_BENCH_SCALE_KEEP/<store>-<n>/, so that
// a command can be profiled on a history without seeding it again. The
// Redis store's fixture is not kept: its server ends with the benchmark.
func (f *scaleFixture) keep(b *testing.B) {
	root := os.Getenv("LOCKGATE_BENCH_SCALE_KEEP")
	if root == "" || f.store == "redis" {
		return
	}
	dst := filepath.Join(root, fmt.Sprintf("%s-%d", f.store, f.n))
	if err := os.RemoveAll(dst); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	copyDir := func(src, to string) {
		if out, err := exec.Command("cp", "-a", src, to).CombinedOutput(); err != nil {
			b.Fatalf("keep: cp %s: %v: %s", src, err, out)
		}
	}
	copyDir(f.repo.Dir, filepath.Join(dst, "clone"))
	if f.remote != "" {
		copyDir(f.remote, filepath.Join(dst, "remote.git"))
		if out, err := exec.Command("git", "-C", filepath.Join(dst, "clone"), "remote", "set-url", "origin", filepath.Join(dst, "remote.git")).CombinedOutput(); err != nil {
			b.Fatalf("keep: %v: %s", err, out)
		}
	}
	b.Logf("kept the %s store's fixture of %d operations in %s", f.store, f.n, dst)
}

// commitRange adds the commits `verify` judges to main: one file each,
// dated within the last hour, after the history and its margin began.
func (f *scaleFixture) commitRange(b *testing.B) {
	var sb strings.Builder
	first := time.Now().Add(-50 * time.Minute)
	for c := range scaleCommits {
		when := first.Add(time.Duration(c) * 20 * time.Second).Unix()
		fmt.Fprintf(&sb, "commit refs/heads/main\nauthor bench <bench@example.com> %d +0000\ncommitter bench <bench@example.com> %d +0000\ndata 7\ncommit\n", when, when)
		if c == 0 {
			sb.WriteString("from refs/heads/main^0\n")
		}
		content := fmt.Sprintf("package p\n\n// commit %d\n", c)
		fmt.Fprintf(&sb, "M 100644 inline src/c%03d.go\ndata %d\n%s\n", c, len(content), content)
	}
	f.repo.FastImport(sb.String())
	f.repo.Git("reset", "-q", "--hard")
}

// run runs lockgate with args in dir and returns how long it took; an exit
// code not in ok fails the benchmark.
func (f *scaleFixture) run(b *testing.B, dir string, ok []int, args ...string) time.Duration {
	cmd := exec.Command(f.bin, args...)
	cmd.Dir, cmd.Env = dir, f.env
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(t0)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		b.Fatal(err)
	}
	if !slices.Contains(ok, code) {
		b.Fatalf("lockgate %s: exit %d: %s", strings.Join(args, " "), code, out)
	}
	return took
}

// exit is the exit code of lockgate args in dir.
func (f *scaleFixture) exit(b *testing.B, dir string, args ...string) int {
	cmd := exec.Command(f.bin, args...)
	cmd.Dir, cmd.Env = dir, f.env
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	} else if err != nil {
		b.Fatal(err)
	}
	return 0
}

func medianMS(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// measure times each command runs times (after one untimed run, so that
// caches are as a clone that works every day has them) and records the
// medians and sizes in tab.
func (f *scaleFixture) measure(b *testing.B, tab *scaleTable, runs int) {
	dir := f.repo.Dir
	st := f.store
	put := func(what, unit string, v float64) { tab.put(what, st, unit, true, f.n, v) }
	tab.put("seeding", st, "s", false, f.n, f.seeded.Seconds())
	tab.note(fmt.Sprintf("%s, %s: the lock table's history written by %s.", st, sizeName(f.n), f.how))
	times := func(what string, ok []int, before func(i int) []string, args func(i int) []string, after func(i int) []string) {
		var ds []time.Duration
		for i := -1; i < runs; i++ {
			if before != nil {
				f.run(b, dir, []int{0}, before(i)...)
			}
			d := f.run(b, dir, ok, args(i)...)
			if i >= 0 {
				ds = append(ds, d)
			}
			if after != nil {
				f.run(b, dir, []int{0}, after(i)...)
			}
		}
		put(what, "ms", medianMS(ds))
	}
	if st == "git" {
		f.freshClone(b, put, func(s string) { tab.note(fmt.Sprintf("%s, %s: %s.", st, sizeName(f.n), s)) }, runs)
	}
	key := func(i int) string { return fmt.Sprintf("bench/a%03d.go", i+1) }
	times("`lock acquire`", []int{0}, nil,
		func(i int) []string { return []string{"lock", "acquire", key(i)} },
		func(i int) []string { return []string{"lock", "release", key(i)} })
	f.repo.Write("src/c000.go", "package p\n\n// staged\n")
	f.repo.Git("add", "src/c000.go")
	times("`hook pre-commit`", []int{0}, nil, func(int) []string { return []string{"hook", "pre-commit"} }, nil)
	f.repo.Git("reset", "-q", "--hard")
	rng := fmt.Sprintf("HEAD~%d..HEAD", scaleCommits)
	// verify's answer does not matter here, only what reading the log
	// and judging the range cost; every size gives the same answer.
	times(fmt.Sprintf("`verify --range` of the last %d commits", scaleCommits), []int{0, 1, 3}, nil,
		func(int) []string { return []string{"verify", "--range", rng} }, nil)
	tab.note(fmt.Sprintf("%s, %s: `verify` exits %d.", st, sizeName(f.n), f.exit(b, dir, "verify", "--range", rng)))
	times("`verify --range` of the last 5 commits", []int{0, 1, 3}, nil,
		func(int) []string { return []string{"verify", "--range", "HEAD~5..HEAD"} }, nil)
	times("`log --since 1h`", []int{0}, nil, func(int) []string { return []string{"log", "--since", "1h", "--json"} }, nil)
	times("`board --once --json`", []int{0}, nil, func(int) []string { return []string{"board", "--once", "--json"} }, nil)
	if st == "git" {
		objects, bytes := refSize(b, f.remote, gitstore.DefaultRef)
		put("remote's lock ref: reachable objects", "", float64(objects))
		put("remote's lock ref: bytes on disk", "B", float64(bytes))
	}
	put("clone's `.git/lockgate`", "B", float64(dirSize(b, filepath.Join(dir, ".git", "lockgate"))))
}

// freshClone times the first lock command of a new clone of the remote,
// and counts the bytes it fetched: transfer.unpackLimit=1 keeps every
// fetched pack as it came, so the packs that appear are what came over
// the wire.
func (f *scaleFixture) freshClone(b *testing.B, put func(what, unit string, v float64), note func(string), runs int) {
	var ds []time.Duration
	var fetched []float64
	over := 0
	for i := -1; i < runs; i++ {
		dir := f.cloneFresh(b)
		packs := filepath.Join(dir, ".git", "objects", "pack")
		before := packSizes(b, packs)
		key := fmt.Sprintf("bench/fresh%03d.go", i+1)
		d := f.run(b, dir, []int{0}, "lock", "acquire", key)
		if i >= 0 && d > 10*time.Second {
			over++
		}
		var got int64
		for name, size := range packSizes(b, packs) {
			if _, ok := before[name]; !ok {
				got += size
			}
		}
		f.run(b, dir, []int{0}, "lock", "release", key)
		if i >= 0 {
			ds = append(ds, d)
			fetched = append(fetched, float64(got))
		}
	}
	put("fresh clone's first `lock acquire`", "ms", medianMS(ds))
	if over > 0 {
		note(fmt.Sprintf("%d of %d fresh clones' first `lock acquire` took longer than the default `locks.git.timeout` (10s), which would have failed it", over, runs))
	}
	slices.Sort(fetched)
	put("fresh clone's first `lock acquire`: bytes fetched", "B", fetched[len(fetched)/2])
	// The first command of a clone that only looks: `lock list`.
	ds = ds[:0]
	for i := -1; i < runs; i++ {
		d := f.run(b, f.cloneFresh(b), []int{0}, "lock", "list", "--json")
		if i >= 0 {
			ds = append(ds, d)
		}
	}
	put("fresh clone's first `lock list`", "ms", medianMS(ds))
}

// cloneFresh makes a new clone of the remote, as fetched over the wire
// (file://, not a path: a clone of a local path links the remote's
// objects; transfer.unpackLimit=1 keeps each fetched pack as it came),
// with the git store's policy.
func (f *scaleFixture) cloneFresh(b *testing.B) string {
	dir := filepath.Join(b.TempDir(), "clone")
	waitGC(b, filepath.Join(dir, ".git"))
	cmd := exec.Command("git", "clone", "-q", "-c", "transfer.unpackLimit=1", "file://"+f.remote, dir)
	cmd.Env = f.env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git clone: %v: %s", err, out)
	}
	// The remote's exchanges may take longer than locks.git.timeout's
	// default (10s) once the ref holds a long history: the clone's
	// policy gives them time, so that what they cost is measured, and
	// the runs over the default are counted.
	policy := strings.Replace(scaleConfig["git"], "{store: git}", "{store: git, git: {timeout: 30m}}", 1)
	if err := os.WriteFile(filepath.Join(dir, ".lockgate.yaml"), []byte(policy), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func packSizes(b *testing.B, dir string) map[string]int64 {
	out := map[string]int64{}
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.Fatal(err)
	}
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".pack") {
			info, err := e.Info()
			if err != nil {
				b.Fatal(err)
			}
			out[e.Name()] = info.Size()
		}
	}
	return out
}

// refSize is how many objects ref reaches in the bare repository dir, and
// their size on disk.
func refSize(b *testing.B, dir, ref string) (objects, bytes int64) {
	out, err := exec.Command("git", "-C", dir, "rev-list", "--objects", ref).Output()
	if err != nil {
		b.Fatalf("rev-list --objects %s: %v", ref, err)
	}
	objects = int64(strings.Count(string(out), "\n"))
	out, err = exec.Command("git", "-C", dir, "rev-list", "--objects", "--disk-usage", ref).Output()
	if err != nil {
		b.Fatalf("rev-list --disk-usage %s: %v", ref, err)
	}
	bytes, err = strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		b.Fatalf("rev-list --disk-usage: %q: %v", out, err)
	}
	return objects, bytes
}

func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// waitGC holds the removal of a test's directories until the `git gc
// --auto` that a command of lockgate's may have left running in the
// background in gitDir is done (it removes gc.pid when it ends), so that
// it does not write into a directory being removed.
func waitGC(b *testing.B, gitDir string) {
	b.Cleanup(func() {
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(gitDir, "gc.pid")); errors.Is(err, fs.ErrNotExist) {
				return
			}
		}
	})
}

// newScratchStore is a file store of its own, that the git store's
// history runs on.
func newScratchStore(b *testing.B) locks.Store {
	s, err := filestore.Open(filepath.Join(b.TempDir(), "locks"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// probeGitLayout runs the git store's own code on a remote of its own —
// one acquisition, then its release — and checks that what it wrote is
// what refChain writes: the record at record.Name(key) as record.Encode
// makes it and the fence counter in a blob "fence". Any other blob of the
// state after the release (a stamp that places the state among the
// table's states) is returned in extra, to be written with the last state
// with its "generation N" line, if any, counting the history's changes.
// withParents reports whether the store's second commit has the first as
// its parent (the ref keeps its history) or none (only the current state).
func probeGitLayout(b *testing.B) (withParents bool, extra map[string][]byte) {
	ctx := context.Background()
	remote := filepath.Join(b.TempDir(), "probe.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	r := gittest.New(b)
	s, err := gitstore.Open(gitstore.Options{GitDir: filepath.Join(r.Dir, ".git"), WorkTree: r.Dir, Remote: remote})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	const key = "probe/file.go"
	rec := locks.Lock{Key: key, Holder: "probe", HolderType: "agent", Session: "probe", Token: "t", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	stored, _, err := s.Acquire(ctx, rec, now)
	if err != nil {
		b.Fatalf("probe acquire: %v", err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", remote}, args...)...).Output()
		if err != nil {
			b.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	want, err := record.Encode(stored)
	if err != nil {
		b.Fatal(err)
	}
	name := record.Name(key)
	held := strings.Fields(git("ls-tree", "-r", "--name-only", gitstore.DefaultRef))
	if !slices.Contains(held, name) || !slices.Contains(held, "fence") {
		b.Fatalf("the git store wrote %q for one lock, without %q or %q: make refChain write what the store writes", held, name, "fence")
	}
	if got := git("cat-file", "blob", gitstore.DefaultRef+":"+name); strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		b.Fatalf("the git store's record is\n%s\nthe seeding writes\n%s", got, want)
	}
	if got := strings.TrimSpace(git("cat-file", "blob", gitstore.DefaultRef+":fence")); got != strconv.FormatUint(stored.Fence, 10) {
		b.Fatalf("the git store's fence blob is %q, the seeding writes %d", got, stored.Fence)
	}
	if err := s.Release(ctx, key, stored.Token); err != nil {
		b.Fatalf("probe release: %v", err)
	}
	extra = map[string][]byte{}
	for _, f := range strings.Fields(git("ls-tree", "-r", "--name-only", gitstore.DefaultRef)) {
		if f != "fence" {
			extra[f] = []byte(git("cat-file", "blob", gitstore.DefaultRef+":"+f))
		}
	}
	for f := range extra {
		if !slices.Contains(held, f) {
			b.Fatalf("the git store's state after a release holds %q, which the state before did not", f)
		}
	}
	if len(held) != len(extra)+2 {
		b.Fatalf("the git store wrote %q for one lock and %q after its release: make refChain write what the store writes", held, slices.Sorted(maps.Keys(extra)))
	}
	withParents = len(strings.Fields(git("rev-list", "--parents", "-n", "1", gitstore.DefaultRef))) > 1
	if withParents && len(extra) > 0 {
		// Blobs beside the records and the fence that change with every
		// state would need writing commit by commit.
		b.Fatalf("the git store chains its states and writes %q beside records and fence: make refChain write them", slices.Sorted(maps.Keys(extra)))
	}
	return withParents, extra
}

// refChain is a lock store that runs on another (a scratch file store)
// and writes, for every change, the commit the git store would have
// written: with withParents a chain of one commit per change, else only
// the last state, in a commit without parents.
type refChain struct {
	locks.Store
	withParents bool
	extra       map[string][]byte // blobs of the last state beside records and fence (see probeGitLayout)
	fence       uint64
	state       map[string][]byte // record name → record
	fences      map[string]uint64 // key → the fence the git store gave its grant
	stream      strings.Builder
	commits     int
}

func (c *refChain) change(b func(w *bufio.Writer), summary string) {
	c.commits++
	if !c.withParents {
		return
	}
	w := bufio.NewWriter(&c.stream)
	defer w.Flush()
	fmt.Fprintf(w, "commit %s\ncommitter lockgate <lockgate@localhost> %d +0000\ndata %d\n%s\n", gitstore.DefaultRef, time.Now().Unix(), len(summary)+1, summary)
	b(w)
	fence := strconv.FormatUint(c.fence, 10) + "\n"
	fmt.Fprintf(w, "M 100644 inline fence\ndata %d\n%s\n", len(fence), fence)
}

// Acquire takes the key on the scratch store and writes its record.
func (c *refChain) Acquire(ctx context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	stored, prev, err := c.Store.Acquire(ctx, rec, now)
	if err != nil {
		return stored, prev, err
	}
	// The git store hands out fences from one counter for the table, the
	// file store from one per guard stripe: take the git store's.
	c.fence++
	stored.Fence = c.fence
	data, err := record.Encode(stored)
	if err != nil {
		return stored, prev, err
	}
	if c.state == nil {
		c.state, c.fences = map[string][]byte{}, map[string]uint64{}
	}
	c.fences[stored.Key] = stored.Fence
	name := record.Name(stored.Key)
	c.state[name] = data
	c.change(func(w *bufio.Writer) {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", name, len(data), data)
	}, "acquire "+stored.Key)
	return stored, prev, nil
}

// Release releases the key on the scratch store and deletes its record.
func (c *refChain) Release(ctx context.Context, key, token string) error {
	if err := c.Store.Release(ctx, key, token); err != nil {
		return err
	}
	name := record.Name(key)
	delete(c.state, name)
	delete(c.fences, key)
	c.change(func(w *bufio.Writer) { fmt.Fprintf(w, "D %s\n", name) }, "release "+key)
	return nil
}

// The reads give each record the fence the git store gave it, not the
// scratch store's, so that the events of a grant's release and takeover
// name the fence of its take, as the git store's would.

// Get is the scratch store's record with the git store's fence.
func (c *refChain) Get(ctx context.Context, key string) (locks.Lock, error) {
	l, err := c.Store.Get(ctx, key)
	return c.refenced(l), err
}

// List is the scratch store's records with the git store's fences.
func (c *refChain) List(ctx context.Context) ([]locks.Entry, error) {
	es, err := c.Store.List(ctx)
	return c.refencedAll(es), err
}

// Overlapping is the scratch store's with the git store's fences.
func (c *refChain) Overlapping(ctx context.Context, key string) ([]locks.Entry, error) {
	es, err := c.Store.Overlapping(ctx, key)
	return c.refencedAll(es), err
}

// Covering is the scratch store's with the git store's fences.
func (c *refChain) Covering(ctx context.Context, paths []string) ([]locks.Entry, error) {
	es, err := c.Store.Covering(ctx, paths)
	return c.refencedAll(es), err
}

// InNamespace is the scratch store's with the git store's fences.
func (c *refChain) InNamespace(ctx context.Context, ns string) ([]locks.Entry, error) {
	es, err := c.Store.InNamespace(ctx, ns)
	return c.refencedAll(es), err
}

func (c *refChain) refenced(l locks.Lock) locks.Lock {
	if f, ok := c.fences[l.Key]; ok {
		l.Fence = f
	}
	return l
}

func (c *refChain) refencedAll(es []locks.Entry) []locks.Entry {
	for i := range es {
		es[i].Lock = c.refenced(es[i].Lock)
	}
	return es
}

// Update and Remove are not part of the history the benchmark writes.
func (c *refChain) Update(context.Context, locks.Lock) (locks.Lock, error) {
	return locks.Lock{}, errors.New("scale seeding: Update is not recorded")
}

func (c *refChain) Remove(context.Context, string) (locks.Lock, error) {
	return locks.Lock{}, errors.New("scale seeding: Remove is not recorded")
}

// generationLine is the line of a state's stamp that counts the changes
// of its table.
var generationLine = regexp.MustCompile(`(?m)^(generation )[0-9]+$`)

// write puts the history on remote's lock ref with git fast-import and
// says how.
func (c *refChain) write(b *testing.B, remote string) string {
	if !c.withParents {
		// Only the last state is on the ref.
		w := bufio.NewWriter(&c.stream)
		const msg = "state"
		fmt.Fprintf(w, "commit %s\ncommitter lockgate <lockgate@localhost> %d +0000\ndata %d\n%s\n", gitstore.DefaultRef, time.Now().Unix(), len(msg)+1, msg)
		names := make([]string, 0, len(c.state))
		for name := range c.state {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", name, len(c.state[name]), c.state[name])
		}
		fence := strconv.FormatUint(c.fence, 10) + "\n"
		fmt.Fprintf(w, "M 100644 inline fence\ndata %d\n%s\n", len(fence), fence)
		for _, name := range slices.Sorted(maps.Keys(c.extra)) {
			data := generationLine.ReplaceAll(c.extra[name], fmt.Appendf(nil, "${1}%d", c.commits))
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", name, len(data), data)
		}
		w.Flush()
	}
	cmd := exec.Command("git", "-C", remote, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(c.stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v: %s", err, out)
	}
	if c.withParents {
		return fmt.Sprintf("git fast-import: %d commits, one per change, as the store chains them", c.commits)
	}
	if len(c.extra) > 0 {
		return fmt.Sprintf("git fast-import: the last state, one commit without parents, as the store writes it, with %s as the store wrote it after %d changes", strings.Join(slices.Sorted(maps.Keys(c.extra)), ", "), c.commits)
	}
	return "git fast-import: the last state, one commit without parents, as the store writes it"
}
