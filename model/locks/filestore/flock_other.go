//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import (
	"context"
	"errors"
	"os"
)

var errNoFlock = errors.New("the file lock store needs flock(2), which this platform lacks")

func flock(context.Context, *os.File) error { return errNoFlock }

func funlock(*os.File) error { return errNoFlock }
