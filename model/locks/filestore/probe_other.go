//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filestore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// present returns the names in dir that exist.
func present(dir string, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			out = append(out, p)
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, err
		}
	}
	return out, nil
}
