package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
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
	c, ok, err := readCache[Config](file, key, jsonCodec)
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
	if err := writeCache(cacheDir, file, key, c, jsonCodec); err != nil {
		return nil, fmt.Errorf("config cache: %w", err)
	}
	return c, nil
}

// LoadWorkPackagesCached is LoadWorkPackages for `claim`, which every
// worker runs for every package: a file that once loaded without problems
// is kept, decoded, in cacheDir, keyed like LoadCached's, so that later
// runs skip the YAML parser (most of a claim's time with thousands of
// packages). A file with problems is never cached.
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
	file := filepath.Join(cacheDir, "packages-"+digest(path)[:16]+".gob")
	key := digest(packagesSchema(), "\x00", path, "\x00", string(data))
	cached, ok, err := readCache[[]cachedPackage](file, key, gobCodec)
	if err != nil {
		return nil, fmt.Errorf("work packages cache: %w", err)
	}
	if ok {
		w := &WorkPackages{Path: path, Packages: make([]WorkPackage, len(*cached)), byID: make(map[string]int, len(*cached))}
		for i, c := range *cached {
			p := c.WorkPackage
			p.idLine, p.fileLines, p.keyLines, p.depLines = c.IDLine, c.FileLines, c.KeyLines, c.DepLines
			w.Packages[i] = p
			w.byID[p.ID] = i
		}
		return w, nil
	}
	w, err := LoadWorkPackagesBytes(path, data)
	if err != nil {
		return nil, err
	}
	out := make([]cachedPackage, len(w.Packages))
	for i, p := range w.Packages {
		out[i] = cachedPackage{WorkPackage: p, IDLine: p.idLine, FileLines: p.fileLines, KeyLines: p.keyLines, DepLines: p.depLines}
	}
	if err := writeCache(cacheDir, file, key, &out, gobCodec); err != nil {
		return nil, fmt.Errorf("work packages cache: %w", err)
	}
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

// cachedPackage is a package as the cache keeps it: with the lines its
// entries were at, which Validate names.
type cachedPackage struct {
	WorkPackage
	IDLine                        int
	FileLines, KeyLines, DepLines []int
}

type cacheEntry[T any] struct {
	Key   string `json:"key"`
	Value *T     `json:"value"`
}

// A codec writes and reads cache entries: JSON for the config, gob for
// the work packages (thousands of them decode four times faster).
type codec struct {
	marshal   func(any) ([]byte, error)
	unmarshal func([]byte, any) error
}

var (
	jsonCodec = codec{json.Marshal, json.Unmarshal}
	gobCodec  = codec{
		marshal: func(v any) ([]byte, error) {
			var b bytes.Buffer
			err := gob.NewEncoder(&b).Encode(v)
			return b.Bytes(), err
		},
		unmarshal: func(data []byte, v any) error {
			return gob.NewDecoder(bytes.NewReader(data)).Decode(v)
		},
	}
)

// readCache returns the cached value under key, if file holds it. Only a
// cache file that is a symbolic link is an error; one that cannot be read
// is a miss.
func readCache[T any](file, key string, c codec) (*T, bool, error) {
	b, err := safefs.ReadFile(file)
	var unsafe *safefs.UnsafePathError
	if errors.As(err, &unsafe) {
		return nil, false, err
	}
	if err != nil {
		return nil, false, nil
	}
	var e cacheEntry[T]
	if c.unmarshal(b, &e) != nil || e.Key != key || e.Value == nil {
		return nil, false, nil
	}
	return e.Value, true, nil
}

// writeCache stores v under key, best effort: only a directory that is not
// lockgate's own (a symbolic link, another user's) is an error.
func writeCache[T any](dir, file, key string, v *T, c codec) error {
	b, err := c.marshal(cacheEntry[T]{Key: key, Value: v})
	if err != nil {
		return nil
	}
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

// packagesSchema is schema for the work packages cache.
var packagesSchema = sync.OnceValue(func() string {
	return describeType(reflect.TypeFor[cachedPackage]()).String()
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
