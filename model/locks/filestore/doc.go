// Package filestore is lockgate's embedded, default lock store: one file per
// key under <git-common-dir>/lockgate/locks, shared by every worktree of a
// clone and by every process on the machine.
//
// Layout of the store directory:
//
//	<enc(key)>.lock            record of a path key
//	keys/<enc(key)>.lock       record of a namespaced (api:, task:, …) or reserved key
//	patterns/<enc(key)>.lock   record of a pattern key (lockkey.IsPattern)
//	.tmp/                      records being written
//	.guard/00 … .guard/ff      256 guard stripes: flock target + fence counter
//
// Keys map to file names as package record says (record.Name: an
// injective, reversible, traversal-proof encoding that stays injective on
// case-insensitive file systems). A path or pattern record is named after
// its key's identity, lockkey.FoldCase(key), whatever core.ignorecase says,
// so that spellings differing in the case of A-Z share one file and one
// guard stripe in every clone; the record keeps the spelling. Earlier versions named it after its
// spelling without core.ignorecase: Open moves such records once, then
// marks the store folded (see migrate).
// Keeping patterns apart lets Overlapping(path) read the path's own file and
// only those pattern files whose key, decoded from the name, overlaps it;
// keeping logical keys apart lets a hook ask about paths, or about one
// namespace (feature: pauses), without listing the others.
//
// Every mutation of a key (Acquire, takeover, Release, Update, Remove) runs
// while holding flock(LOCK_EX) on the key's guard stripe, so mutations of one
// key are serialized across goroutines and processes; the kernel drops the
// lock when a process dies, so a SIGKILL never wedges a key. A record becomes
// visible only complete: it is written to .tmp/ and synced, then linked into
// place for a fresh create (which, like O_EXCL, fails if the name is taken)
// or renamed over the old record for a takeover or update, and the directory
// is synced. Readers (Get, List, Overlapping) take no lock: every file they
// can see is whole. A record that is empty or unreadable is corrupt, never
// free: only Remove (lockgate lock clear --force) deletes it.
//
// Fences come from a counter in the guard stripe: a new fence is above the
// counter and above the fence of the record it replaces, so a key's fences
// only grow, also across crashes (see nextFence).
//
// The store needs flock(2): it works on Linux, macOS and the BSDs. Its
// errors are *locks.UnavailableError for I/O failures, and the other
// typed errors of package locks as the Store interface documents.
package filestore
