//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import (
	"errors"
	"os"

	"github.com/lockgate/lockgate/internal/safefs"
)

// readSmall reads the file at path, never through a symbolic link.
func readSmall(path string, _ []byte) ([]byte, error) {
	data, err := safefs.ReadFile(path)
	var unsafe *safefs.UnsafePathError
	if errors.As(err, &unsafe) {
		return nil, &os.PathError{Op: "open", Path: path, Err: errLink}
	}
	return data, err
}
