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
	file := filepath.Join(cacheDir, "config-"+digest(path)[:16]+".json")
	key := digest(schema(), "\x00", path, "\x00", string(data))
	if c, ok := readCache(file, key); ok {
		c.Path = path
		return c, nil
	}
	c, err := LoadBytes(path, data)
	if err != nil {
		return nil, err
	}
	writeCache(file, key, c)
	return c, nil
}

type cacheEntry struct {
	Key    string  `json:"key"`
	Config *Config `json:"config"`
}

func readCache(file, key string) (*Config, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || e.Key != key || e.Config == nil {
		return nil, false
	}
	return e.Config, true
}

func writeCache(file, key string, c *Config) {
	b, err := json.Marshal(cacheEntry{Key: key, Config: c})
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o777); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".config-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
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
