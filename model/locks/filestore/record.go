package filestore

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
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

// KeyOfName returns the key whose record a file named name is: the
// identity (lockkey.FoldCase) its base name escapes, read without regard to
// the case of its letters, whatever its directory. A record elsewhere than
// RecordName of that key (another directory, other letter case: the same
// file on a case-insensitive file system) is that key's, misplaced. It
// returns false for a hashed name, whose record alone says its key (see
// IsHashedName), and for a name that is no key's record in any spelling.
func KeyOfName(name string) (string, bool) {
	stem, ok := strings.CutSuffix(path.Base(name), lockSuffix)
	if !ok {
		return "", false
	}
	key, ok := decodeKey(caseOfNames(stem))
	if !ok {
		return "", false
	}
	return lockkey.FoldCase(key), true
}

// Misplaced reports a record name that is another spelling of the name
// of a key's record (see KeyOfName), and that key. It is cheap for the
// names RecordName gives paths, which a store holds by the thousand.
func Misplaced(name string) (string, bool) {
	if plainPathName(name) {
		return "", false
	}
	key, ok := KeyOfName(name)
	if !ok || RecordName(key) == name {
		return "", false
	}
	return key, true
}

// plainPathName reports a name RecordName gives a path key made of the
// bytes kept raw and '/' only: such a name is its key's own.
func plainPathName(name string) bool {
	stem, ok := strings.CutSuffix(name, lockSuffix)
	if !ok || stem == "" || stem[0] == '.' || len(stem) > maxNameLen || stem == lockkey.WorkflowKey || stem == lockkey.ClaimKey {
		return false
	}
	for i := 0; i < len(stem); i++ {
		switch {
		case rawByte(stem[i]):
		case strings.HasPrefix(stem[i:], "%2F"):
			i += 2
		default:
			return false
		}
	}
	return true
}

// IsHashedName reports a record name whose key is too long to escape
// (see RecordName): only the record inside says its key.
func IsHashedName(name string) bool {
	stem, ok := strings.CutSuffix(path.Base(name), lockSuffix)
	return ok && isHashedName(stem)
}

// caseOfNames spells stem in the letter case encodeKey writes: raw letters
// lower, the hex digits of an escape upper. Names that differ only in case
// are one file on a case-insensitive file system; this is the one of them
// a record name can be.
func caseOfNames(stem string) string {
	b := []byte(stem)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '%':
			for j := i + 1; j < min(i+3, len(b)); j++ {
				if 'a' <= b[j] && b[j] <= 'f' {
					b[j] -= 'a' - 'A'
				}
			}
			i += 2
		case 'A' <= c && c <= 'Z':
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
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
