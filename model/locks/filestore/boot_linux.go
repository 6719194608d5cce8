package filestore

import (
	"encoding/hex"
	"os"
	"strings"
	"sync"
)

// bootID identifies the running boot of the kernel (a new one after every
// reboot, crash or not), which tells whether unsynced writes to the page
// cache may have been lost since a stripe was last written.
var bootID = sync.OnceValues(func() ([16]byte, bool) {
	var id [16]byte
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return id, false
	}
	b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(string(data)), "-", ""))
	if err != nil || len(b) != len(id) {
		return id, false
	}
	copy(id[:], b)
	return id, true
})
