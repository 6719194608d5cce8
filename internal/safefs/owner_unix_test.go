//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package safefs

import (
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dirInfo is a directory's FileInfo owned by uid.
type dirInfo struct{ uid uint32 }

func (d dirInfo) Name() string       { return "d" }
func (d dirInfo) Size() int64        { return 0 }
func (d dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (d dirInfo) ModTime() time.Time { return time.Time{} }
func (d dirInfo) IsDir() bool        { return true }
func (d dirInfo) Sys() any           { return &syscall.Stat_t{Uid: d.uid} }

// TestCheckDirOwner: a directory of another user is refused, whoever runs
// the test (no chown needed).
func TestCheckDirOwner(t *testing.T) {
	t.Parallel()
	me := uint32(os.Geteuid())
	if err := checkDir("/x", dirInfo{uid: me}); err != nil {
		t.Fatalf("own directory refused: %v", err)
	}
	err := checkDir("/x", dirInfo{uid: me + 1})
	if err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("another user's directory: %v", err)
	}
}
