package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"github.com/lockgate/lockgate/internal/safefs"
)

// LoadCached is Load for hot paths (every commit runs a hook): a file that
// once loaded without problems is kept, decoded, in cacheDir, keyed by its
// path, its bytes and the shape of Config, so later runs skip the YAML
// parser. A file with problems is never cached and reports them as Load
// does; a cache that cannot be read or written is ignored.
func LoadCached(path, cacheDir string) (*Config, error) {
	data, err := readPolicy(path, MaxConfigBytes, "config")
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, err
	}
	if ok, err := usableCache(cacheDir); err != nil {
		return nil, fmt.Errorf("config cache: %w", err)
	} else if !ok {
		return LoadBytes(path, data)
	}
	file := filepath.Join(cacheDir, "config-"+digest(path)[:16]+".json")
	key := digest(schema(), "\x00", path, "\x00", string(data))
	c, ok, err := readCache[Config](file, key)
	if err != nil {
		return nil, fmt.Errorf("config cache: %w", err)
	}
	if ok {
		c.Path = path
		return c, nil
	}
	if c, err = LoadBytes(path, data); err != nil {
		return nil, err
	}
	if err := writeCache(cacheDir, file, key, c); err != nil {
		return nil, fmt.Errorf("config cache: %w", err)
	}
	return c, nil
}

// LoadWorkPackagesCached is LoadWorkPackages for `claim`, which every
// worker runs for every package: a file that once loaded without problems
// is kept, decoded, in cacheDir, keyed like LoadCached's, so that later
// runs skip the YAML parser (most of a claim's time with thousands of
// packages). A file with problems is never cached; a cache file that is
// damaged, or not one this lockgate wrote for these bytes, is not read.
func LoadWorkPackagesCached(path, cacheDir string) (*WorkPackages, error) {
	data, err := readPolicy(path, MaxWorkPackagesBytes, "work packages")
	if err != nil {
		return nil, err
	}
	if ok, err := usableCache(cacheDir); err != nil {
		return nil, fmt.Errorf("work packages cache: %w", err)
	} else if !ok {
		return LoadWorkPackagesBytes(path, data)
	}
	file := filepath.Join(cacheDir, "packages-"+digest(path)[:16]+packagesExt)
	key := digest(packagesSchema(), "\x00", path, "\x00", string(data))
	b, err := readCacheFile(file)
	if err != nil {
		return nil, fmt.Errorf("work packages cache: %w", err)
	}
	if ps, ok := decodePackages(b, key); ok {
		w := &WorkPackages{Path: path, Packages: ps, byID: make(map[string]int, len(ps))}
		for i := range ps {
			w.byID[ps[i].ID] = i
		}
		if len(w.byID) == len(ps) { // ids are unique in a file that loads
			return w, nil
		}
	}
	w, err := LoadWorkPackagesBytes(path, data)
	if err != nil {
		return nil, err
	}
	if err := WriteCacheFile(cacheDir, file, encodePackages(key, w.Packages)); err != nil {
		return nil, fmt.Errorf("work packages cache: %w", err)
	}
	// The file earlier releases kept, in gob.
	_ = os.Remove(strings.TrimSuffix(file, packagesExt) + ".gob")
	return w, nil
}

// usableCache reports whether cacheDir can keep decoded files. The cache
// and the directory above it are lockgate's own: a symbolic link planted
// there is an error, never read through or written to; any other failure
// to check them means no cache, and no error.
func usableCache(cacheDir string) (bool, error) {
	err := safefs.CheckDirs(cacheDir, 2)
	var unsafe *safefs.UnsafePathError
	if errors.As(err, &unsafe) {
		return false, err
	}
	return err == nil, nil
}

// cacheEntry is a JSON cache file: the key it was written under, and the
// value.
type cacheEntry[T any] struct {
	Key   string `json:"key"`
	Value *T     `json:"value"`
}

// readCacheFile returns file's bytes, or none if it cannot be read. Only
// a cache file that is a symbolic link is an error.
func readCacheFile(file string) ([]byte, error) {
	b, err := safefs.ReadFile(file)
	var unsafe *safefs.UnsafePathError
	if errors.As(err, &unsafe) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	return b, nil
}

// readCache returns the JSON cache entry under key, if file holds it.
func readCache[T any](file, key string) (*T, bool, error) {
	b, err := readCacheFile(file)
	if err != nil || b == nil {
		return nil, false, err
	}
	var e cacheEntry[T]
	if json.Unmarshal(b, &e) != nil || e.Key != key || e.Value == nil {
		return nil, false, nil
	}
	return e.Value, true, nil
}

// writeCache stores v under key as JSON, best effort.
func writeCache[T any](dir, file, key string, v *T) error {
	b, err := json.Marshal(cacheEntry[T]{Key: key, Value: v})
	if err != nil {
		return nil
	}
	return WriteCacheFile(dir, file, b)
}

// WriteCacheFile puts b in file in the clone's cache directory dir, best
// effort: only a directory that is not lockgate's own (a symbolic link,
// another user's) is an error; a cache that cannot be written is left
// unwritten.
func WriteCacheFile(dir, file string, b []byte) error {
	var unsafe *safefs.UnsafePathError
	if err := safefs.MkdirAll(dir, 0o777, 2); errors.As(err, &unsafe) {
		return err
	} else if err != nil {
		return nil
	}
	// A fresh name (O_EXCL) renamed into place: a link at file is replaced,
	// never written through.
	tmp, err := os.CreateTemp(dir, ".config-*")
	if err != nil {
		return nil
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
	return nil
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// schema describes Config's fields, names, types, tags and defaults, so
// that a cache written by a lockgate with another Config (or other
// defaults, which the cached decoding holds) is never read.
var schema = sync.OnceValue(func() string {
	b := describeType(reflect.TypeFor[Config]())
	fmt.Fprintf(b, "%+v", *Default())
	return b.String()
})

// packagesSchema is schema for the work packages cache: the fields of a
// package and the version of the cache file's format.
var packagesSchema = sync.OnceValue(func() string {
	b := describeType(reflect.TypeFor[WorkPackage]())
	fmt.Fprintf(b, "%s %d", packagesMagic, packagesVersion)
	return b.String()
})

// describeType writes t's fields, names, types and tags, recursively.
func describeType(t reflect.Type) *strings.Builder {
	var b strings.Builder
	var walk func(t reflect.Type)
	seen := map[reflect.Type]bool{}
	walk = func(t reflect.Type) {
		b.WriteString(t.String())
		b.WriteByte(';')
		if seen[t] {
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				b.WriteString(f.Name)
				b.WriteByte(' ')
				b.WriteString(string(f.Tag))
				b.WriteByte(' ')
				walk(f.Type)
			}
		case reflect.Slice, reflect.Pointer, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		}
	}
	walk(t)
	return &b
}
