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
	data, err := ReadFile(path, MaxConfigBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Default(), nil
		}
		var ce *Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	// The cache and the directory above it are lockgate's own: a symbolic
	// link planted there is refused, never read through or written to.
	var unsafe *safefs.UnsafePathError
	if err := safefs.CheckDirs(cacheDir, 2); errors.As(err, &unsafe) {
		return nil, fmt.Errorf("config cache: %w", err)
	} else if err != nil {
		return LoadBytes(path, data) // no usable cache: no error
	}
	file := filepath.Join(cacheDir, "config-"+digest(path)[:16]+".json")
	key := digest(schema(), "\x00", path, "\x00", string(data))
	c, ok, err := readCache(file, key)
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

type cacheEntry struct {
	Key    string  `json:"key"`
	Config *Config `json:"config"`
}

// readCache returns the cached config under key, if file holds it. Only a
// cache file that is a symbolic link is an error; one that cannot be read
// is a miss.
func readCache(file, key string) (*Config, bool, error) {
	b, err := safefs.ReadFile(file)
	var unsafe *safefs.UnsafePathError
	if errors.As(err, &unsafe) {
		return nil, false, err
	}
	if err != nil {
		return nil, false, nil
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Key != key || e.Config == nil {
		return nil, false, nil
	}
	return e.Config, true, nil
}

// writeCache stores c under key, best effort: only a directory that is not
// lockgate's own (a symbolic link, another user's) is an error.
func writeCache(dir, file, key string, c *Config) error {
	b, err := json.Marshal(cacheEntry{Key: key, Config: c})
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
	walk(reflect.TypeFor[Config]())
	fmt.Fprintf(&b, "%+v", *Default())
	return b.String()
})
