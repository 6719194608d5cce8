// Package gitstore keeps the lock table on a ref of a git remote, so that
// every clone of a repository — laptops, CI runners, agents on other
// machines — shares one set of locks with nothing to run but the git
// server they already push to.
//
// The ref (refs/lockgate/locks by default) names a commit whose tree holds
// one blob per lock, at the name package record gives the key's record
// (record.Name: path keys at the top, patterns/ and keys/ below),
// in the record format the file store writes too, a blob "fence" with the last
// fence number handed out, and a blob "table", the stamp: which table the
// state is of and its generation (see Stamp). Each change is one commit
// without parents that replaces the last, made from objects written
// straight into the clone's object database — the work tree, index and
// HEAD are never touched — and published with
// `git push --force-with-lease=<ref>:<old>`: the remote moves the ref only
// if it still names the commit the change was decided on, so of racing
// writers exactly one wins and the others decide again on the new state.
// Every change of one Transact (all keys of one command) is one commit:
// all or nothing. The ref keeps no history — the remote's gc drops the
// states before the present and a fresh clone fetches the live locks —
// so the stamp, not ancestry, tells a later state from a rewind: each
// clone remembers the state it saw last and refuses one that is not a
// later state of the same table.
//
// Reads ask the remote which commit the ref names (one round trip) and
// fetch it only when the clone does not have it; a snapshot of the table
// is cached in the clone (<common-dir>/lockgate/cache) so that a hook
// whose answer has not changed reads nothing else. Options.MaxAge lets a
// read use a cached snapshot younger than that without asking.
//
// Expiry is judged on the writer's clock: a lock is taken over only once
// it expired more than Options.ClockSkew ago, so that a writer whose clock
// runs a little ahead does not take a lock its holder still counts on.
package gitstore
