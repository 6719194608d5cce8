//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package journal

import "os"

// lockFile is a no-op where flock(2) is unavailable; appends then rely on
// O_APPEND alone.
func lockFile(*os.File, bool) error { return nil }

func unlockFile(*os.File) error { return nil }

// tryLockFile cannot tell a live writer's intent from a dead one's without
// flock(2): intents are then left alone.
func tryLockFile(*os.File) (bool, error) { return false, nil }
