package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

const (
	// PatternDir holds the records of pattern keys (lockkey.IsPattern).
	PatternDir = "patterns"
	// KeyDir holds the records of namespaced and reserved keys (Logical).
	KeyDir = "keys"
)

// Logical reports a namespaced or reserved key: those live apart from path
// keys, so a hook that asks about paths never lists them and a query for one
// namespace never lists paths.
func Logical(key string) bool {
	return lockkey.Namespace(key) != "" || key == lockkey.WorkflowKey || key == lockkey.ClaimKey
}

// Name is where key's record lives relative to a store's directory,
// with '/' separators: "<name>.lock" for a path key, "patterns/<name>.lock"
// for a pattern, "keys/<name>.lock" for a namespaced or reserved key, the
// name escaped from key's identity (lockkey.FoldCase). The file store keeps
// its records at these names in its directory, the git store in its tree.
func Name(key string) string { return nameAs(key, lockkey.FoldCase(key)) }

// LegacyName is where versions that folded A-Z only (lockkey.FoldCaseASCII)
// kept key's record; Name(key) for a key whose identity did not change
// (every key of ASCII letters only). Stores read a record found there as
// key's own.
func LegacyName(key string) string { return nameAs(key, lockkey.FoldCaseASCII(key)) }

// nameAs is the name of key's record kept under identity id, in the
// directory of key's kind.
func nameAs(key, id string) string {
	name := Stem(id) + Suffix
	switch {
	case lockkey.IsPattern(key):
		return path.Join(PatternDir, name)
	case Logical(key):
		return path.Join(KeyDir, name)
	}
	return name
}

// KeyOfName returns the key whose record a file named name is: the
// identity (lockkey.FoldCase) its base name escapes, read without regard to
// the case of its letters, whatever its directory. A record elsewhere than
// Name of that key (another directory, other letter case: the same
// file on a case-insensitive file system) is that key's, misplaced. It
// returns false for a hashed name, whose record alone says its key (see
// IsHashedName), and for a name that is no key's record in any spelling.
func KeyOfName(name string) (string, bool) {
	stem, ok := strings.CutSuffix(path.Base(name), Suffix)
	if !ok {
		return "", false
	}
	key, ok := KeyOfStem(caseOfNames(stem))
	if !ok {
		return "", false
	}
	return lockkey.FoldCase(key), true
}

// Misplaced reports a record name that is another spelling of the name
// of a key's record (see KeyOfName), and that key. It is cheap for the
// names Name gives paths, which a store holds by the thousand.
func Misplaced(name string) (string, bool) {
	if plainPathName(name) {
		return "", false
	}
	key, ok := KeyOfName(name)
	if !ok || Name(key) == name {
		return "", false
	}
	return key, true
}

// plainPathName reports a name Name gives a path key made of the
// bytes kept raw and '/' only: such a name is its key's own.
func plainPathName(name string) bool {
	stem, ok := strings.CutSuffix(name, Suffix)
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
// (see Name): only the record inside says its key.
func IsHashedName(name string) bool {
	stem, ok := strings.CutSuffix(path.Base(name), Suffix)
	return ok && IsHashedStem(stem)
}

// caseOfNames spells stem in the letter case Stem writes: raw letters
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

// Parse decodes one whole record. Anything short of a complete JSON object
// naming a key and an expiry is an error: such a record must never be
// mistaken for a free key.
func Parse(data []byte) (locks.Lock, error) {
	var rec locks.Lock
	if len(strings.TrimSpace(string(data))) == 0 {
		return rec, errors.New("empty record")
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return locks.Lock{}, fmt.Errorf("invalid record: %w", err)
	}
	if err := rec.Validate(); err != nil {
		return locks.Lock{}, err
	}
	return rec, nil
}

// Encode encodes rec as the stores write it: one JSON object
// and a newline.
func Encode(rec locks.Lock) ([]byte, error) {
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode lock %s: %w", rec.Key, err)
	}
	return append(data, '\n'), nil
}
