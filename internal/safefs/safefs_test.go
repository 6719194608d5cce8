package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMkdirAllAndCheckDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	if err := MkdirAll(dir, 0o755, 2); err != nil {
		t.Fatalf("MkdirAll: %v", err)
	}
	if err := CheckDirs(filepath.Join(root, "a", "missing"), 2); err != nil {
		t.Fatalf("CheckDirs of a missing directory: %v", err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir    string
		levels int
		want   string
	}{
		{link, 1, "is a symbolic link"},
		{filepath.Join(link, "sub"), 2, "is a symbolic link"},
	} {
		for name, f := range map[string]func() error{
			"MkdirAll":  func() error { return MkdirAll(tc.dir, 0o755, tc.levels) },
			"CheckDirs": func() error { return CheckDirs(tc.dir, tc.levels) },
		} {
			err := f()
			var ue *UnsafePathError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%s, %d) = %v, want %q", name, tc.dir, tc.levels, err, tc.want)
			}
		}
	}
	if err := MkdirAll(file, 0o755, 1); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("MkdirAll over a file: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something was made outside: %v", entries)
	}
}

func TestOpenFileRefusesLinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_RDWR | os.O_CREATE, os.O_WRONLY | os.O_APPEND | os.O_CREATE, os.O_WRONLY | os.O_TRUNC} {
		f, err := OpenFile(link, flag, 0o644)
		var ue *UnsafePathError
		if !errors.As(err, &ue) {
			if f != nil {
				f.Close()
			}
			t.Fatalf("OpenFile(link, %#x) = %v, want an *UnsafePathError", flag, err)
		}
	}
	if _, err := ReadFile(link); err == nil {
		t.Fatal("ReadFile read through a link")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("target changed: %q", b)
	}
	if _, err := OpenFile(filepath.Join(root, "missing"), os.O_RDONLY, 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
