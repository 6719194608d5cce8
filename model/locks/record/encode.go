package record

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const (
	// maxNameLen bounds an escaped name; longer keys are hashed so that the
	// name plus ".lock" stays under the usual 255-byte limit.
	maxNameLen = 200
	// HashPrefix starts hashed names. '~' is always escaped otherwise, so a
	// hashed name never equals an escaped one.
	HashPrefix = '~'
	// Suffix ends every record's name.
	Suffix   = ".lock"
	upperHex = "0123456789ABCDEF"
)

// rawByte reports whether c is kept as itself in a file name. Only lower-case
// letters are raw, so two names that differ only in case cannot both exist.
func rawByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Stem returns the file name stem for key (without ".lock"). Bytes in
// [a-z0-9._-] are kept, except a leading '.'; every other byte becomes %XX
// with upper-case hex. The result never contains '/', is never "." or "..",
// and stays distinct from every other key's stem when lower-cased. A stem
// longer than 200 bytes is replaced by '~' and the hex SHA-256 of the key;
// such a name is not reversible and its record must be read to learn the key.
func Stem(key string) string {
	var b strings.Builder
	b.Grow(len(key) + 8)
	for i := 0; i < len(key); i++ {
		c := key[i]
		if rawByte(c) && (i > 0 || c != '.') {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&0xf])
		}
		if b.Len() > maxNameLen {
			return hashedName(key)
		}
	}
	return b.String()
}

func hashedName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return string(HashPrefix) + hex.EncodeToString(sum[:])
}

// IsHashedStem reports whether stem is a name hashedName makes. A stem
// that is neither that nor an escaped key (KeyOfStem) is the record of no
// key: no lookup ever reads it, so it blocks nothing; `lock list` shows
// it, to be removed by file (RemoveRecord).
func IsHashedStem(stem string) bool {
	if len(stem) != 1+2*sha256.Size || stem[0] != HashPrefix {
		return false
	}
	_, err := hex.DecodeString(stem[1:])
	return err == nil && strings.ToLower(stem) == stem
}

// KeyOfStem inverts Stem for escaped (not hashed) stems. It accepts only
// the exact form Stem produces, so each key has exactly one file name.
func KeyOfStem(stem string) (string, bool) {
	if stem == "" || stem[0] == HashPrefix || len(stem) > maxNameLen {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(stem))
	for i := 0; i < len(stem); i++ {
		c := stem[i]
		if c != '%' {
			if !rawByte(c) || (i == 0 && c == '.') {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(stem) {
			return "", false
		}
		hi, lo := unhex(stem[i+1]), unhex(stem[i+2])
		if hi < 0 || lo < 0 {
			return "", false
		}
		d := byte(hi<<4 | lo)
		if rawByte(d) && (i > 0 || d != '.') {
			return "", false // escaped although it could be raw
		}
		b.WriteByte(d)
		i += 2
	}
	return b.String(), true
}

// unhex decodes one upper-case hex digit, or returns -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
