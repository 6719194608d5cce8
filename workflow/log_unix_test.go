//go:build unix

package workflow

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO in place of a cache file is not opened for reading, which would
// wait for a writer for ever.
func TestReadEventsCacheFIFO(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", events("a", 3))
	want := coldRead(t, r, mainRef)
	file := cacheFile(r.Dir+"/.git", mainRef)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(file, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, st := read(t, r, mainRef)
	if st.full != 1 {
		t.Fatalf("stats %+v, want a full read", st)
	}
	sameEvents(t, "FIFO", got, want)
	// And with another ref of the same tree, whose cache is only peeked at.
	r.Git("update-ref", remoteRef, mainRef)
	if err := os.Remove(cacheFile(r.Dir+"/.git", remoteRef)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cacheFile(r.Dir+"/.git", remoteRef), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, _ = read(t, r, mainRef, remoteRef)
	sameEvents(t, "FIFO of a shared tree", got, want)
}
