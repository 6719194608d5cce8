// Package workflow commits lockgate's events to the workflow branch
// (`refs/heads/lockgate/workflow` by default) and pushes it, without ever
// touching the working tree, the index, HEAD or any other local ref. It
// writes the branch's objects with go-git, which only the git lock store's
// object writer (locks/gitstore) and internal/gitexec's config parser
// import besides.
//
// # Layout
//
// The branch is independent of the project's history: its first commit has
// no parent. An event is one blob, the event's JSON line, at
//
//	events/<h[0:2]>/<h[2:4]>/<id>.json     h = hex(sha256(id))
//
// in the tree of the commit that adds it. The branch's events are those of
// every commit it reaches (format 2, format.go): a commit's tree holds its
// segment, about the last 64 events, and an events/format blob, so that the
// tip's tree, which every push makes the remote read whole, does not grow
// with the history. Format 1 kept every event in the tip's tree; Migrate
// moves such a branch in place, and Commit refuses it until then.
//
// The shards come from a hash of the id, not from the id itself, because a
// journal id starts with its creation time in nanoseconds: its first digits
// are the same for years. With two levels of 256 shards a commit rewrites a
// leaf of a few entries and two trees of at most 256 entries, plus the
// root, so committing an event costs the same at 100 and at 100,000 events.
// An id that is not a plain file name (or longer than 100 bytes) is stored
// as `~<hex(sha256(id))>.json`. Every commit tells its story in its message:
// `lock_acquire api:GET /v1/users by agent-7` for one event, `N events` and
// one such line per event for a batch, so `git log lockgate/workflow` reads
// like the journal.
//
// # Writing
//
// Objects (blob → trees → commit) are written into the common directory's
// object store, so every worktree of a clone writes the same branch, and
// the working tree, the index, HEAD and every other ref are never read or
// written (go-git's Worktree is never used). go-git encodes the commits
// and decodes trees and commits; the object files themselves go through
// odb, which reads a packed object with a binary search in one fan-out
// bucket of the pack index instead of loading whole indexes as go-git's
// storage does on first use (tens of milliseconds per process at 100,000
// events), and writes loose objects in git's format, stored uncompressed
// (git's core.looseCompression=0; git compresses them when it packs).
//
// A clone that does not have the branch yet starts it on its
// remote-tracking ref (`refs/remotes/<remote>/<branch>`, which a clone of
// a remote with the branch has), when that names an event commit: its
// first push is then a fast-forward, whatever the length of the log,
// where a root commit would have to be merged with the whole remote
// branch. Without one, the first commit is a root commit.
//
// The ref is moved with `git update-ref REF NEW OLD`, a compare-and-swap
// under git's own `.lock` file: it holds against the git binary and every
// other writer, which go-git's CheckAndSetReference does not. A lost swap
// re-reads the ref, rebuilds the commit on the new parent and tries again,
// at most Config.MaxAttempts (10) times, sleeping a random time that grows
// with the attempt and with how long the lost attempt took. When every
// attempt is lost, Commit returns ErrContention: the event is still in the
// journal, and the next Sync commits it. An event whose id is already in
// the parent's tree is never written again, so Commit and Sync are
// idempotent and a crash between the journal append and the commit is
// repaired by the next Sync. CatchUp is Sync of the part of the journal
// written since its last call (a cached byte offset): every commit the
// service makes to the branch is followed by one, so that events recorded
// without a commit of their own reach the branch with the next one.
//
// The branch only grows: its events are those of its history, and no
// commit writes an event id again with other content. CheckEventCommits
// holds commits pushed to a server to that.
//
// # Pushing
//
// Push never forces (`git push --no-verify REMOTE REF:REF`, no `+`). When
// the remote refuses a non-fast-forward, the remote branch is fetched into
// `refs/remotes/<remote>/<branch>` (the ref `git fetch` itself keeps; no
// FETCH_HEAD, no tags) and merged: a fast-forward when the local branch
// is behind and the remote tree holds every file of the local one
// unchanged, else a merge commit, parents local then remote, message
// `Merge <remote>/<branch>: N events from <remote>`, whose tree is the
// union of both event sets. Trees are sharded by id and equal ids have
// equal blobs, so the union is a tree merge without conflicts; should one
// id carry two different blobs, the one with the smaller hash is kept, so
// that every clone merges to the same tree. The push is retried at most
// PushAttempts times. Failures are *PushError values wrapping ErrNoRemote,
// ErrUnreachable or ErrRejected; the events stay in the journal and on
// the local branch. Sync never talks to the remote.
//
// A successful push leaves `refs/remotes/<remote>/<branch>` at the tip it
// sent (git's push moves it; Push does when the remote's fetch refspec
// does not cover the branch), so Unpushed tells from two local refs
// whether the branch holds commits no push has sent: a push that gave
// up, a remote that was down, a process killed before it pushed.
// PushPending pushes them, in up to PushRounds rounds of Push with a
// growing wait between them.
//
// # Reading
//
// ReadEvents reads the whole log of one or more refs (the branch and its
// remote-tracking ref) with git alone: `git rev-list --objects` lists the
// event files of the history (format 1: `git ls-tree` of the tip's events
// tree) and one `git cat-file --batch-command` reads every blob. The
// decoded events of each ref are cached under
// `<common-dir>/lockgate/cache/`, keyed by its tip (format 1: its events
// tree), so that an unchanged ref costs no blob and a ref that only
// gained commits reads just their events.
package workflow
