package config

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// sameConfig compares two configs as users see them (positions aside).
func sameConfig(t *testing.T, name string, got, want *Config) {
	t.Helper()
	g, w := *got, *want
	g.pos, w.pos = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: cached config differs:\n got %#v\nwant %#v", name, g, w)
	}
}

func TestLoadCachedRoundTrip(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"empty":    "",
		"defaults": "version: 1\n",
		"lists and maps": "version: 1\nlocks: {namespaces: [], durations: {agent: {task: 10m}}, feature_purposes: [pause]}\n" +
			"scope:\n  user_owned: [A.md]\n  profiles: {backfill: {allow: [tests/**]}, empty: {allow: []}}\n" +
			"  key_rules: [{paths: [migrations/**], keys: [\"db:migration-slot\"]}]\nmcp: {identity_from_arguments: true}\n",
	}
	spec, err := os.ReadFile(filepath.Join("testdata", "spec.lockgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs["spec"] = string(spec)
	for name, doc := range docs {
		dir := t.TempDir()
		path := filepath.Join(dir, ".lockgate.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cache := filepath.Join(dir, "cache")
		first, err := LoadCached(path, cache)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameConfig(t, name+" (miss)", first, want)
		second, err := LoadCached(path, cache)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameConfig(t, name+" (hit)", second, want)
	}
}

func TestLoadCachedInvalidation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ".lockgate.yaml")
	cache := filepath.Join(dir, "cache")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("version: 1\nhooks: {require_lock: true}\n")
	if c, err := LoadCached(path, cache); err != nil || !c.Hooks.RequireLock {
		t.Fatalf("first load: %v %+v", err, c)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "config-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	// A hit comes from the cache: a doctored entry shows through.
	b, _ := os.ReadFile(files[0])
	doctored := strings.Replace(string(b), `"RequireLock":true`, `"RequireLock":false`, 1)
	if doctored == string(b) {
		t.Fatalf("cache entry has no RequireLock: %s", b)
	}
	if err := os.WriteFile(files[0], []byte(doctored), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := LoadCached(path, cache); c.Hooks.RequireLock {
		t.Fatal("the cache was not read")
	}
	// Any change to the file is parsed afresh.
	write("version: 1\nhooks: {require_lock: true}\n# edited\n")
	if c, err := LoadCached(path, cache); err != nil || !c.Hooks.RequireLock {
		t.Fatalf("after an edit: %v %+v", err, c)
	}
	// A file with problems reports them, cached or not, and is not cached.
	write("version: 1\nhooks: {nope: 1}\n")
	if _, err := LoadCached(path, cache); err == nil || !strings.Contains(err.Error(), ":2") {
		t.Fatalf("bad config: %v", err)
	}
	if _, err := LoadCached(path, cache); err == nil {
		t.Fatal("bad config passed the second time")
	}
	// A corrupt cache is ignored.
	write("version: 1\nplanner: {cooldown_cycles: 7}\n")
	if err := os.WriteFile(files[0], []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadCached(path, cache); err != nil || c.Planner.CooldownCycles != 7 {
		t.Fatalf("corrupt cache: %v %+v", err, c)
	}
	// No file: the defaults, nothing cached for it.
	if c, err := LoadCached(filepath.Join(dir, "absent.yaml"), cache); err != nil || c.Path != "" {
		t.Fatalf("absent: %v %+v", err, c)
	}
	// An unwritable cache directory is no error.
	if c, err := LoadCached(path, filepath.Join(path, "not-a-dir")); err != nil || c.Planner.CooldownCycles != 7 {
		t.Fatalf("unwritable cache: %v %+v", err, c)
	}
}

// FuzzLoadCached: whatever the file holds, the cached load answers as the
// plain one, on a miss and on a hit.
func FuzzLoadCached(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "spec.lockgate.yaml")); err == nil {
		f.Add(data)
	}
	f.Add([]byte("locks: {durations: {human: {task: 90s}}}\n"))
	f.Add([]byte("scope: {profiles: {p: {allow: []}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, ".lockgate.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := Load(path)
		for _, pass := range []string{"miss", "hit"} {
			got, err := LoadCached(path, filepath.Join(dir, "cache"))
			if (err == nil) != (werr == nil) {
				t.Fatalf("%s: LoadCached error %v, Load error %v", pass, err, werr)
			}
			if err == nil {
				sameConfig(t, pass, got, want)
			}
		}
	})
}

// A file names its git store's ref and remote or not, and says so through
// the cache too.
func TestGitSetSurvivesCache(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string][2]bool{
		"version: 1\nlocks:\n  git:\n    ref: refs/lockgate/x\n": {true, false},
		"version: 1\nlocks:\n  git:\n    remote: up\n":           {false, true},
		"version: 1\nworkflow:\n  remote: up\n":                  {false, true},
		"version: 1\nlocks:\n  store: git\n":                     {false, false},
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // parsed, then from the cache
			c, err := LoadCached(path, filepath.Join(dir, "cache"))
			if err != nil {
				t.Fatal(err)
			}
			if got := [2]bool{c.Locks.Git.RefSet, c.Locks.Git.RemoteSet}; got != want {
				t.Errorf("%q (load %d): RefSet, RemoteSet = %v, want %v", body, i, got, want)
			}
		}
	}
}

// A file names its store or not, and says so through the cache too.
func TestStoreSetSurvivesCache(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]bool{"version: 1\nlocks:\n  store: file\n": true, "version: 1\nlocks:\n  stale_minutes: 5\n": false} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // parsed, then from the cache
			c, err := LoadCached(path, filepath.Join(dir, "cache"))
			if err != nil {
				t.Fatal(err)
			}
			if c.Locks.StoreSet != want {
				t.Errorf("%q (load %d): StoreSet = %v, want %v", body, i, c.Locks.StoreSet, want)
			}
		}
	}
}

// The global claim lock is off unless the file turns it on, on every
// store; through the cache too.
func TestGlobalClaimLock(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]bool{
		"version: 1\nlocks:\n  store: git\n":                                 false,
		"version: 1\nlocks:\n  store: redis\n":                               false,
		"version: 1\nlocks:\n  use_global_claim_lock: true\n":                true,
		"version: 1\nlocks:\n  store: git\n  use_global_claim_lock: false\n": false,
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // parsed, then from the cache
			c, err := LoadCached(path, filepath.Join(dir, "cache"))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Locks.GlobalClaimLock(); got != want {
				t.Errorf("%q (load %d): GlobalClaimLock() = %v, want %v", body, i, got, want)
			}
		}
	}
	if Default().Locks.GlobalClaimLock() {
		t.Error("defaults: GlobalClaimLock() = true, want off")
	}
}

func TestLoadWorkPackagesCached(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "work-packages.yaml")
	cache := filepath.Join(dir, "cache")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const src = `packages:
  - id: A
    title: first
    priority: 2
    locks: {files: [src/a.go, "bad key "], keys: ["api:x"], ttl: 90s, reason: r}
  - id: B
    depends_on: [A]
    locks: {ttl_minutes: 5, files: [src/b.go]}
`
	write(src)
	want, err := LoadWorkPackages(path)
	if err != nil {
		t.Fatal(err)
	}
	// The lines validation names come through the cache too.
	check := func(key string) error {
		if strings.HasSuffix(key, " ") {
			return errors.New("bad")
		}
		return nil
	}
	wantErr := want.Validate(nil, check)
	if wantErr == nil {
		t.Fatal("no validation problem to compare")
	}
	for _, round := range []string{"miss", "hit"} {
		got, err := LoadWorkPackagesCached(path, cache)
		if err != nil {
			t.Fatalf("%s: %v", round, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: cached packages differ:\n got %#v\nwant %#v", round, got, want)
		}
		if gotErr := got.Validate(nil, check); gotErr == nil || gotErr.Error() != wantErr.Error() {
			t.Errorf("%s: validation %v, want %v", round, gotErr, wantErr)
		}
		if p, ok := got.Find("B"); !ok || p.TTL() != 5*time.Minute {
			t.Errorf("%s: Find(B) = %+v, %v", round, p, ok)
		}
	}
	files, _ := filepath.Glob(filepath.Join(cache, "packages-*"+packagesExt))
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	// A hit comes from the cache: an entry rewritten under its key shows
	// through.
	b, _ := os.ReadFile(files[0])
	key := digest(packagesSchema(), "\x00", path, "\x00", src)
	ps, ok := decodePackages(b, key)
	if !ok {
		t.Fatalf("the cache file does not decode: %q", b)
	}
	ps[0].Title = "doctr"
	doctored := encodePackages(key, ps)
	if err := os.WriteFile(files[0], doctored, 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err := LoadWorkPackagesCached(path, cache); err != nil || w.Packages[0].Title != "doctr" {
		t.Fatalf("hit: %v %+v", err, w)
	}
	// A damaged or foreign entry is never read: the file is parsed again
	// (and the entry written afresh).
	dup := slices.Clone(ps)
	dup[1].ID = dup[0].ID
	// resum gives b, its last 4 bytes replaced, the checksum of the rest.
	resum := func(b []byte) []byte {
		body := slices.Clone(b[:len(b)-4])
		return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli()))
	}
	at := bytes.Index(doctored, []byte("doctr"))
	changed := slices.Clone(doctored)
	changed[at] = 'D'
	newer := slices.Clone(doctored)
	newer[len(packagesMagic)]++
	damaged := map[string][]byte{
		"a byte changed":     changed,
		"cut short":          doctored[:len(doctored)-1],
		"grown":              append(slices.Clone(doctored), 0),
		"grown, summed":      resum(slices.Concat(doctored[:len(doctored)-4], []byte{0}, doctored[len(doctored)-4:])),
		"empty":              {},
		"another key":        encodePackages(digest("another"), ps),
		"duplicate ids":      encodePackages(key, dup),
		"another version":    resum(newer),
		"gob of an old file": []byte("\x1f\xff\x81\x03\x01\x01\x0bcacheEntry"),
	}
	for name, data := range damaged {
		if err := os.WriteFile(files[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		if w, err := LoadWorkPackagesCached(path, cache); err != nil || w.Packages[0].Title != "first" || w.Packages[1].ID != "B" {
			t.Fatalf("%s: %v %+v", name, err, w)
		}
		if b, _ := os.ReadFile(files[0]); !bytes.Equal(b, encodePackages(key, want.Packages)) {
			t.Errorf("%s: the entry was not written afresh", name)
		}
	}
	// The gob file of earlier releases goes when the entry is written.
	old := strings.TrimSuffix(files[0], packagesExt) + ".gob"
	if err := os.WriteFile(old, []byte("gob"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWorkPackagesCached(path, cache); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v, want it removed", old, err)
	}
	// A changed file is read again.
	write(strings.Replace(src, "title: first", "title: second", 1))
	if w, err := LoadWorkPackagesCached(path, cache); err != nil || w.Packages[0].Title != "second" {
		t.Fatalf("after a change: %v %+v", err, w)
	}
	// A file with problems is reported each time, never cached.
	write("packages:\n  - id: A\n  - id: A\n")
	for range 2 {
		if _, err := LoadWorkPackagesCached(path, cache); err == nil || !strings.Contains(err.Error(), "duplicate package id") {
			t.Fatalf("duplicate ids: %v", err)
		}
	}
	// A cache that cannot be used is no error.
	write(src)
	if _, err := LoadWorkPackagesCached(path, filepath.Join(path, "not-a-dir")); err != nil {
		t.Fatalf("unusable cache: %v", err)
	}
}

// TestCacheSeesSameSizeSameTime: a file rewritten in place to the same
// size, with its modification time restored (two writes within the file
// system's timestamp granularity, a checkout that restores it), is parsed
// afresh: the cache entry is keyed by the bytes read, not by the file's
// size and time.
func TestCacheSeesSameSizeSameTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	// rewrite replaces path's bytes in place, keeping its size and times.
	rewrite := func(path, from, to string) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		nb := strings.Replace(string(b), from, to, 1)
		if len(from) != len(to) || nb == string(b) {
			t.Fatalf("rewrite %q to %q in %s", from, to, b)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(nb), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(path)
		if err != nil || after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
			t.Fatalf("size and time not kept: %v, %v", fi, after)
		}
	}

	cfg := filepath.Join(dir, ".lockgate.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nplanner: {cooldown_cycles: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{3, 3} { // a miss, then a hit
		if c, err := LoadCached(cfg, cache); err != nil || c.Planner.CooldownCycles != want {
			t.Fatalf("before the rewrite: %v, %+v", err, c)
		}
	}
	rewrite(cfg, "cooldown_cycles: 3", "cooldown_cycles: 8")
	if c, err := LoadCached(cfg, cache); err != nil || c.Planner.CooldownCycles != 8 {
		t.Fatalf("after the rewrite: %v, %+v, want cooldown_cycles 8", err, c)
	}

	wps := filepath.Join(dir, "work-packages.yaml")
	if err := os.WriteFile(wps, []byte("packages:\n  - id: A\n    title: first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if w, err := LoadWorkPackagesCached(wps, cache); err != nil || w.Packages[0].Title != "first" {
			t.Fatalf("before the rewrite: %v, %+v", err, w)
		}
	}
	rewrite(wps, "first", "again")
	if w, err := LoadWorkPackagesCached(wps, cache); err != nil || w.Packages[0].Title != "again" {
		t.Fatalf("after the rewrite: %v, %+v, want the title again", err, w)
	}
}

// fillValue sets v and everything in it, exported or not, to values other
// than zero, told apart by n; a list of empty is empty, not nil.
func fillValue(t *testing.T, v reflect.Value, n int, empty bool) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			fillValue(t, reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), 10*n+i, empty)
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d\x00é", n))
	case reflect.Int, reflect.Int64:
		v.SetInt(-int64(n) * 1e9)
	case reflect.Slice:
		l := reflect.MakeSlice(v.Type(), 2, 2)
		if empty {
			l = reflect.MakeSlice(v.Type(), 0, 0)
		}
		for i := range l.Len() {
			fillValue(t, l.Index(i), 10*n+i, empty)
		}
		v.Set(l)
	default:
		t.Fatalf("a %s in WorkPackage: teach encodePackages, decodePackages and this test", v.Type())
	}
}

// TestPackagesCacheKeepsEveryField: every field of a package, exported or
// not, comes back from the cache file as it went in, lists empty or nil
// as they were. A field added to WorkPackage fails it until the cache
// file holds it.
func TestPackagesCacheKeepsEveryField(t *testing.T) {
	t.Parallel()
	ps := make([]WorkPackage, 4)
	for i := range ps {
		fillValue(t, reflect.ValueOf(&ps[i]).Elem(), i+1, i == 2)
	}
	ps[3] = WorkPackage{ID: "zero"} // lists nil
	ps[0].Priority, ps[0].Line = math.MaxInt, math.MinInt
	got, ok := decodePackages(encodePackages("k", ps), "k")
	if !ok || !reflect.DeepEqual(got, ps) {
		t.Fatalf("round trip: %v\n got %#v\nwant %#v", ok, got, ps)
	}
	if got, ok := decodePackages(encodePackages("k", nil), "k"); !ok || len(got) != 0 {
		t.Fatalf("no packages: %v %#v", ok, got)
	}
}

// TestPackagesCacheDamaged: a cache file with any one byte changed, or
// cut anywhere, is not read.
func TestPackagesCacheDamaged(t *testing.T) {
	t.Parallel()
	w, err := LoadWorkPackagesBytes(wpName, []byte(fullPackages(3)))
	if err != nil {
		t.Fatal(err)
	}
	good := encodePackages("k", w.Packages)
	if ps, ok := decodePackages(good, "k"); !ok || !reflect.DeepEqual(ps, w.Packages) {
		t.Fatalf("the undamaged file: %v %#v", ok, ps)
	}
	for i := range good {
		for _, bit := range []byte{0x01, 0x80, 0xff} {
			b := slices.Clone(good)
			b[i] ^= bit
			if _, ok := decodePackages(b, "k"); ok {
				t.Errorf("byte %d ^ %#x: read", i, bit)
			}
		}
		if _, ok := decodePackages(good[:i], "k"); ok {
			t.Errorf("cut to %d bytes: read", i)
		}
	}
}

// FuzzDecodePackages: whatever a cache file's body holds, its checksum
// right, decoding it never panics, and what it accepts is written back
// as it was read.
func FuzzDecodePackages(f *testing.F) {
	body := func(ps []WorkPackage) []byte {
		b := encodePackages("k", ps)
		return b[:len(b)-4]
	}
	f.Add(body(nil))
	f.Add(body([]WorkPackage{{ID: "A", DependsOn: []string{}, Locks: PackageLocks{Files: []string{"a.go"}, TTL: Duration(time.Minute)}, fileLines: []int{3}}}))
	w, err := LoadWorkPackagesBytes(wpName, []byte(fullPackages(3)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body(w.Packages))
	f.Fuzz(func(t *testing.T, b []byte) {
		data := binary.LittleEndian.AppendUint32(slices.Clip(b), crc32.Checksum(b, castagnoli()))
		ps, ok := decodePackages(data, "k")
		if !ok {
			return
		}
		again, ok := decodePackages(encodePackages("k", ps), "k")
		if !ok || !reflect.DeepEqual(again, ps) {
			t.Fatalf("accepted %q as %#v, which reads back as %v %#v", b, ps, ok, again)
		}
	})
}

// BenchmarkLoadWorkPackagesCached: what a claim pays to load the largest
// work packages file (MaxWorkPackages packages) from the cache.
func BenchmarkLoadWorkPackagesCached(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "work-packages.yaml")
	if err := os.WriteFile(path, []byte(fullPackages(MaxWorkPackages)), 0o644); err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	if _, err := LoadWorkPackagesCached(path, cache); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if w, err := LoadWorkPackagesCached(path, cache); err != nil || len(w.Packages) != MaxWorkPackages {
			b.Fatal(err)
		}
	}
}
