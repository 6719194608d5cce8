// Package record is the lock record format the file store and the git store
// share: a record is one JSON object and a newline (Encode, Parse), kept
// under a name derived from its key (Name).
//
// Layout, relative to a store's directory or tree:
//
//	<enc(key)>.lock            record of a path key
//	keys/<enc(key)>.lock       record of a namespaced (api:, task:, …) or reserved key
//	patterns/<enc(key)>.lock   record of a pattern key (lockkey.IsPattern)
//
// Keys map to names by an injective, reversible, traversal-proof encoding
// (Stem) that stays injective on case-insensitive file systems: bytes in
// [a-z0-9._-] are kept (a leading '.' is not), every other byte becomes %XX
// with upper-case hex, and a name longer than 200 bytes is replaced by '~'
// and the hex SHA-256 of the key (the record inside names the key). A
// record is named after its key's identity, lockkey.FoldCase(key), so that
// spellings differing in the case of A-Z share one name; the record keeps
// the spelling. A name that is another spelling of a key's name is that
// key's record, misplaced (Misplaced); a name that is neither an escaped
// key nor a hashed one is the record of no key.
//
// The package is pure: it reads and writes no file.
package record
