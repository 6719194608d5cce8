package workflow

import (
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrOldFormat says that the workflow branch is of format 1, whose tip
// holds the whole history: lockgate no longer writes it, and
// `lockgate workflow migrate` moves it to format 2 in place.
var ErrOldFormat error = oldFormatError{}

type oldFormatError struct{}

func (oldFormatError) Error() string {
	return "the workflow branch is of format 1 (every event in its tip's tree): run `lockgate workflow migrate` to move it to format 2 (or to take the remote's, when another clone moved it)"
}

// Resolves says that the error names the one command that mends it:
// `workflow sync`, which a failed commit otherwise suggests, would fail
// the same way until then.
func (oldFormatError) Resolves() string { return "lockgate workflow migrate" }

// commitFormat says how the commit whose root tree is root is written:
// format 2 with what its format blob (events/format) says, and the blob,
// or format 1 (old true) when it has none. The zero root (no commit) is
// a format-2 start without bases.
func (w *Writer) commitFormat(t *trees, root plumbing.Hash) (fm branchFormat, blob plumbing.Hash, old bool, err error) {
	if root.IsZero() {
		return branchFormat{version: formatVersion}, plumbing.ZeroHash, false, nil
	}
	events, err := t.subtree(root, eventsDir)
	if err != nil || events.IsZero() {
		return fm, blob, err == nil, err
	}
	e, ok, err := t.entry(events, formatFile, false)
	if err != nil {
		return fm, blob, false, err
	}
	if !ok {
		return fm, blob, true, nil
	}
	if !e.Mode.IsFile() {
		return fm, blob, false, fmt.Errorf("%s: %w (not a file)", formatFile, errFormat)
	}
	obj, err := w.odb.EncodedObject(plumbing.BlobObject, e.Hash)
	if err != nil {
		return fm, blob, false, fmt.Errorf("read %s: %w", formatFile, err)
	}
	if obj.Size() > maxFormatBytes {
		return fm, blob, false, fmt.Errorf("%s: %w (%d bytes)", formatFile, errFormat, obj.Size())
	}
	r, err := obj.Reader()
	if err != nil {
		return fm, blob, false, fmt.Errorf("read %s: %w", formatFile, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return fm, blob, false, fmt.Errorf("read %s: %w", formatFile, err)
	}
	if fm, err = parseFormat(data); err != nil {
		return fm, blob, false, err
	}
	return fm, e.Hash, false, nil
}

// segmentBase returns the events tree a commit on a format-2 root adds
// its events to: root's, or none (a new segment) once root's holds
// segmentShards shard directories.
func (t *trees) segmentBase(root plumbing.Hash) (plumbing.Hash, error) {
	events, err := t.subtree(root, eventsDir)
	if err != nil || events.IsZero() {
		return events, err
	}
	tr, err := t.get(events)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if len(tr.Entries) > segmentShards { // the shards and the format blob
		return plumbing.ZeroHash, nil
	}
	return events, nil
}

// formatEntry is the events/ entry of the format blob: blob, or when
// zero fm's, written now.
func (w *Writer) formatEntry(blob plumbing.Hash, fm branchFormat) (object.TreeEntry, error) {
	if blob.IsZero() {
		var err error
		if blob, err = w.writeBlob(fm.encode()); err != nil {
			return object.TreeEntry{}, err
		}
	}
	return object.TreeEntry{Name: formatFile, Mode: filemode.Regular, Hash: blob}, nil
}

// rootOf writes the root tree of a format-2 commit, events/ alone.
func (w *Writer) rootOf(events plumbing.Hash) (plumbing.Hash, error) {
	return w.writeTree([]object.TreeEntry{{Name: eventsDir, Mode: filemode.Dir, Hash: events}})
}

// formatRoot writes the root tree of a format-2 commit whose events/ is
// the tree events (zero: none) with fm's format blob put in.
func (w *Writer) formatRoot(events plumbing.Hash, fm branchFormat) (plumbing.Hash, error) {
	e, err := w.formatEntry(plumbing.ZeroHash, fm)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	evH, err := w.rewrite(w.trees(), events, []object.TreeEntry{e})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return w.rootOf(evH)
}
