package config

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// settle is how old a file's last change must be for its stamp to stand
// for its bytes: a file changed again within its file system's timestamp
// granularity (a second or two on some) could keep its stamp.
const settle = 2 * time.Second

// fileStamp names the state of the file fi describes — size, modification
// and change times, inode — when it last changed at least settle before
// now; "" when it changed since or cannot be told. A file rewritten in
// any way gets a new change time, which no one can set by hand.
func fileStamp(fi os.FileInfo, now time.Time) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || now.Sub(fi.ModTime()) < settle || now.Sub(time.Unix(st.Ctim.Unix())) < settle {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size, fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec)
}
