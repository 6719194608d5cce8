package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// UnsafePathError is a path lockgate refuses to use: a symbolic link or a
// directory of another user.
type UnsafePathError struct {
	Path    string
	Problem string // "is a symbolic link", …
}

func (e *UnsafePathError) Error() string {
	return fmt.Sprintf("%s %s: lockgate does not use it (remove it if lockgate should recreate it)", e.Path, e.Problem)
}

// MkdirAll makes dir, and its missing parents, like os.MkdirAll. dir and
// its levels-1 nearest ancestors (the part of the path lockgate owns) are
// made one at a time and checked with Lstat: each must be a real directory
// owned by the current user.
func MkdirAll(dir string, perm fs.FileMode, levels int) error {
	dirs := chain(dir, levels)
	if err := os.MkdirAll(filepath.Dir(dirs[len(dirs)-1]), perm); err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := ensure(dirs[i], perm); err != nil {
			return err
		}
	}
	return nil
}

// CheckDirs checks as MkdirAll does but creates nothing: the directories
// that exist must be real directories owned by the current user.
func CheckDirs(dir string, levels int) error {
	for _, d := range chain(dir, levels) {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := checkDir(d, fi); err != nil {
			return err
		}
	}
	return nil
}

// chain is dir and its levels-1 nearest ancestors, dir first.
func chain(dir string, levels int) []string {
	dirs := []string{filepath.Clean(dir)}
	for range levels - 1 {
		dirs = append(dirs, filepath.Dir(dirs[len(dirs)-1]))
	}
	return dirs
}

func ensure(d string, perm fs.FileMode) error {
	fi, err := os.Lstat(d)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(d, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, err = os.Lstat(d)
	}
	if err != nil {
		return err
	}
	return checkDir(d, fi)
}

func checkDir(d string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &UnsafePathError{Path: d, Problem: "is a symbolic link"}
	case !fi.IsDir():
		// Not a way out of the repository, only in the way.
		return &os.PathError{Op: "use directory", Path: d, Err: syscall.ENOTDIR}
	}
	if uid, ok := owner(fi); ok && uid != os.Geteuid() {
		return &UnsafePathError{Path: d, Problem: fmt.Sprintf("belongs to another user (uid %d, not %d)", uid, os.Geteuid())}
	}
	return nil
}

// OpenFile is os.OpenFile that never follows a symbolic link at name: a
// link there is an *UnsafePathError.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := refuseLink(name); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, flag|noFollow, perm)
	if err != nil {
		// O_NOFOLLOW fails with ELOOP (EMLINK on some systems) on a link
		// planted after the check above: say what it is.
		if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &UnsafePathError{Path: name, Problem: "is a symbolic link"}
		}
		return nil, err
	}
	return f, nil
}

// ReadFile reads name, which must not be a symbolic link.
func ReadFile(name string) ([]byte, error) {
	f, err := OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
