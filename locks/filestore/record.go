package filestore

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/lockkey"
)

// RecordName is where key's record lives relative to a store's directory,
// with '/' separators: "<name>.lock" for a path key, "patterns/<name>.lock"
// for a pattern, "keys/<name>.lock" for a namespaced or reserved key, the
// name escaped from key's identity (lockkey.FoldCase). The git store keeps
// its records at the same names in its tree.
func RecordName(key string) string {
	name := encodeKey(lockkey.FoldCase(key)) + lockSuffix
	switch {
	case lockkey.IsPattern(key):
		return path.Join(patternDir, name)
	case logical(key):
		return path.Join(keyDir, name)
	}
	return name
}

// KeyOfName returns the identity a record name (RecordName's form) was
// escaped from, or false when the name is hashed or is no record's name:
// then only the record itself says its key.
func KeyOfName(name string) (string, bool) {
	stem, ok := strings.CutSuffix(path.Base(name), lockSuffix)
	if !ok {
		return "", false
	}
	return decodeKey(stem)
}

// ParseRecord decodes one whole record as the file store writes it; any
// data short of a complete record naming a key and an expiry is an error.
func ParseRecord(data []byte) (locks.Lock, error) { return parseRecord(data) }

// EncodeRecord encodes rec as the file store writes it: one JSON object
// and a newline.
func EncodeRecord(rec locks.Lock) ([]byte, error) {
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode lock %s: %w", rec.Key, err)
	}
	return append(data, '\n'), nil
}
