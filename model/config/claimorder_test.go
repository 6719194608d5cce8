package config

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"
)

// idKeys is a package's files and keys as they are written: the test's
// key identities.
func idKeys(p *WorkPackage) ([]string, error) {
	return append(append([]string(nil), p.Locks.Files...), p.Locks.Keys...), nil
}

// The claim order holds the packages in claim order, each as the file
// has it; it is kept for the file's bytes and the caller's checks, and
// made again (load is called) when either changes.
func TestLoadClaimOrderCached(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "work-packages.yaml")
	cache := filepath.Join(dir, "cache")
	src := "packages:\n  - id: A\n    locks: {files: [a.go]}\n  - id: B\n    priority: 3\n    depends_on: [A]\n    locks: {files: [b.go], keys: ['db:x'], ttl: 5m}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	loads := 0
	load := func() (*WorkPackages, error) {
		loads++
		return LoadWorkPackagesCached(path, cache)
	}
	check := func(checks string, wantLoads int, wantIDs ...string) *ClaimOrder {
		t.Helper()
		c, err := LoadClaimOrderCached(path, cache, checks, load, idKeys)
		if err != nil {
			t.Fatal(err)
		}
		if loads != wantLoads {
			t.Errorf("checks %q: %d loads, want %d", checks, loads, wantLoads)
		}
		var ids []string
		for i := range c.Len() {
			p, err := c.At(i)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		if !slices.Equal(ids, wantIDs) {
			t.Errorf("claim order %v, want %v", ids, wantIDs)
		}
		return c
	}
	first := check("policy 1", 1, "B", "A")
	second := check("policy 1", 1, "B", "A") // from the cache
	if first.Key != second.Key {
		t.Errorf("one file and one policy, two keys: %s, %s", first.Key, second.Key)
	}
	w, err := LoadWorkPackagesCached(path, cache)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := w.Find("B")
	got, err := second.At(0)
	if err != nil || !reflect.DeepEqual(got, b) {
		t.Errorf("B from the cache %#v, %v; want %#v", got, err, b)
	}
	if p, pos, ok := second.Find("A"); !ok || pos != 1 || p.ID != "A" {
		t.Errorf("Find(A) = %v, %d, %v; want A at 1", p, pos, ok)
	}
	if _, _, ok := second.Find("Z"); ok {
		t.Error("Find(Z) found a package")
	}
	for key, want := range map[string][]int{"a.go": {1}, "db:x": {0}, "c.go": nil} {
		if got, ok := second.Locking(key); !ok || !slices.Equal(got, want) {
			t.Errorf("Locking(%s) = %v, %v; want %v", key, got, ok, want)
		}
	}
	if third := check("policy 2", 2, "B", "A"); third.Key == first.Key {
		t.Error("another policy kept the key")
	}
	if err := os.WriteFile(path, []byte(src+"  - id: C\n    priority: 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("policy 2", 3, "C", "B", "A")
	if _, err := second.At(2); err == nil {
		t.Error("At past the end: no error")
	}
	// A file that does not load is an error, and is not cached.
	boom := errors.New("the policy refuses a key")
	if _, err := LoadClaimOrderCached(path, cache, "policy 3", func() (*WorkPackages, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("a file that does not load: %v, want %v", err, boom)
	}
	check("policy 3", 4, "C", "B", "A")
}

// A file that has not changed for a while is known by its stamp: the
// order is stamped, and a later load needs not read the file. A file
// rewritten with as many bytes gets another stamp, and a new order.
// Where lockgate reads no change time (not linux), nothing is stamped and
// every load reads the file. (Not parallel: it moves the package's clock.)
func TestClaimOrderStamped(t *testing.T) {
	defer func(c func() time.Time) { clock = c }(clock)
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	dir := t.TempDir()
	path := filepath.Join(dir, "work-packages.yaml")
	cache := filepath.Join(dir, "cache")
	write := func(id string) {
		if err := os.WriteFile(path, []byte("packages:\n  - id: "+id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func() string {
		t.Helper()
		c, err := LoadClaimOrderCached(path, cache, "p", func() (*WorkPackages, error) { return LoadWorkPackagesCached(path, cache) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.At(0)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	write("A")
	if id := load(); id != "A" {
		t.Fatalf("order of A: %s", id)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	stamp := fileStamp(fi, clock())
	if stamped := stamp != ""; stamped != (runtime.GOOS == "linux") {
		t.Fatalf("stamp %q on %s", stamp, runtime.GOOS)
	}
	stampKey := digest(packagesSchema(), "\x00", path, "\x00", stamp, "\x00", "p")
	files, _ := filepath.Glob(filepath.Join(cache, "order-*"))
	if len(files) != 1 {
		t.Fatalf("order files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if _, ok := decodeClaimOrder(b, "", stampKey); stamp != "" && !ok {
		t.Fatal("the order of a settled file is not stamped")
	}
	write("B")
	if id := load(); id != "B" {
		t.Fatalf("after the file was rewritten with as many bytes: %s, want B", id)
	}
}

// A claim order file with any one byte changed, or cut anywhere, is not
// read.
func TestClaimOrderDamaged(t *testing.T) {
	t.Parallel()
	w, err := LoadWorkPackagesBytes(wpName, []byte(fullPackages(3)))
	if err != nil {
		t.Fatal(err)
	}
	good := encodeClaimOrder("k", claimOrderOf(w.ClaimOrder(), idKeys))
	if c, ok := decodeClaimOrder(good, "k", ""); !ok || c.Len() != 3 {
		t.Fatalf("the undamaged file: %v", ok)
	}
	if _, ok := decodeClaimOrder(good, "other", ""); ok {
		t.Error("read under another key")
	}
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x80
		if _, ok := decodeClaimOrder(b, "k", ""); ok {
			t.Errorf("byte %d ^ 0x80: read", i)
		}
		if _, ok := decodeClaimOrder(good[:i], "k", ""); ok {
			t.Errorf("cut to %d bytes: read", i)
		}
	}
}

// FuzzDecodeClaimOrder: whatever a claim order file's body holds, its
// checksum right, neither decoding it nor reading any package of it
// panics, and a package read is written back as it was read.
func FuzzDecodeClaimOrder(f *testing.F) {
	body := func(ps []*WorkPackage) []byte {
		b := encodeClaimOrder("k", claimOrderOf(ps, idKeys))
		return b[:len(b)-4]
	}
	f.Add(body(nil))
	w, err := LoadWorkPackagesBytes(wpName, []byte(fullPackages(3)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body(w.ClaimOrder()))
	f.Fuzz(func(t *testing.T, b []byte) {
		data := binary.LittleEndian.AppendUint32(slices.Clip(b), crc32.Checksum(b, castagnoli()))
		c, ok := decodeClaimOrder(data, "k", "")
		if !ok {
			return
		}
		_, _, _ = c.Find("WP-1")
		_, _ = c.Locking("a.go")
		for i := range c.Len() {
			p, err := c.At(i)
			if err != nil {
				continue
			}
			again, ok := decodeClaimOrder(encodeClaimOrder("k", claimOrderOf([]*WorkPackage{p}, nil)), "k", "")
			if !ok {
				t.Fatalf("package %d %#v does not encode back", i, p)
			}
			if q, err := again.At(0); err != nil || !reflect.DeepEqual(q, p) {
				t.Fatalf("package %d %#v reads back as %#v, %v", i, p, q, err)
			}
		}
	})
}
