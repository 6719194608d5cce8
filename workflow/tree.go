package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// trees decodes each tree once during one operation. Only names and
// hashes are read: finding an event never reads a blob.
type trees struct {
	w *Writer
	m map[plumbing.Hash]*object.Tree
}

func (w *Writer) trees() *trees { return &trees{w: w, m: make(map[plumbing.Hash]*object.Tree)} }

var emptyTree = &object.Tree{}

// get returns the tree h; the zero hash is the empty tree.
func (t *trees) get(h plumbing.Hash) (*object.Tree, error) {
	if h.IsZero() {
		return emptyTree, nil
	}
	if tr, ok := t.m[h]; ok {
		return tr, nil
	}
	tr, err := object.GetTree(t.w.odb, h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	t.m[h] = tr
	return tr, nil
}

// compareEntry orders a name (a directory when dir) against entry e in
// git's tree order, which compares names as if directories ended in '/'.
// It allocates nothing: it runs for every entry of every rewritten tree.
func compareEntry(name string, dir bool, e *object.TreeEntry) int {
	n := min(len(name), len(e.Name))
	if c := strings.Compare(name[:n], e.Name[:n]); c != 0 {
		return c
	}
	next := func(s string, dir bool) int {
		switch {
		case len(s) > n:
			return int(s[n])
		case dir:
			return '/'
		}
		return 0
	}
	return next(name, dir) - next(e.Name, e.Mode == filemode.Dir)
}

func entryLess(a, b *object.TreeEntry) bool {
	return compareEntry(a.Name, a.Mode == filemode.Dir, b) < 0
}

// entry finds name (a directory when dir) in tree h by binary search.
func (t *trees) entry(h plumbing.Hash, name string, dir bool) (object.TreeEntry, bool, error) {
	tr, err := t.get(h)
	if err != nil {
		return object.TreeEntry{}, false, err
	}
	es := tr.Entries
	i := sort.Search(len(es), func(i int) bool { return compareEntry(name, dir, &es[i]) <= 0 })
	if i < len(es) && compareEntry(name, dir, &es[i]) == 0 {
		return es[i], true, nil
	}
	return object.TreeEntry{}, false, nil
}

// subtree returns the hash of directory name in tree h, zero when absent.
func (t *trees) subtree(h plumbing.Hash, name string) (plumbing.Hash, error) {
	e, ok, err := t.entry(h, name, true)
	if err != nil || !ok {
		return plumbing.ZeroHash, err
	}
	return e.Hash, nil
}

// leaf returns the hash of the leaf tree of loc under root, zero when
// absent.
func (t *trees) leaf(root plumbing.Hash, loc location) (plumbing.Hash, error) {
	h := root
	for _, name := range [...]string{eventsDir, loc.l1, loc.l2} {
		var err error
		if h, err = t.subtree(h, name); err != nil || h.IsZero() {
			return plumbing.ZeroHash, err
		}
	}
	return h, nil
}

// has reports whether the event at loc is in the tree root.
func (t *trees) has(root plumbing.Hash, loc location) (bool, error) {
	lf, err := t.leaf(root, loc)
	if err != nil || lf.IsZero() {
		return false, err
	}
	_, ok, err := t.entry(lf, loc.name, false)
	return ok, err
}

// upsert returns the entries of tree base with add put in (replacing
// entries of the same name), in git's order: the base is sorted already,
// so only add is sorted and the two are merged.
func (t *trees) upsert(base plumbing.Hash, add []object.TreeEntry) ([]object.TreeEntry, error) {
	tr, err := t.get(base)
	if err != nil {
		return nil, err
	}
	add = slices.Clone(add)
	slices.SortFunc(add, func(a, b object.TreeEntry) int { return compareEntry(a.Name, a.Mode == filemode.Dir, &b) })
	replaced := make(map[string]bool, len(add))
	for _, a := range add {
		replaced[a.Name] = true
	}
	out := make([]object.TreeEntry, 0, len(tr.Entries)+len(add))
	i := 0
	for _, e := range tr.Entries {
		if replaced[e.Name] {
			continue
		}
		for i < len(add) && entryLess(&add[i], &e) {
			out = append(out, add[i])
			i++
		}
		out = append(out, e)
	}
	return append(out, add[i:]...), nil
}

// writeTree stores a tree whose entries are in git's order.
func (w *Writer) writeTree(es []object.TreeEntry) (plumbing.Hash, error) {
	n := 0
	for i := range es {
		n += len(es[i].Name) + 28
	}
	buf := make([]byte, 0, n)
	for i := range es {
		e := &es[i]
		if e.Name == "" || strings.ContainsAny(e.Name, "/\x00") {
			return plumbing.ZeroHash, fmt.Errorf("write tree: bad entry name %q", e.Name)
		}
		if i > 0 && !entryLess(&es[i-1], e) {
			return plumbing.ZeroHash, fmt.Errorf("write tree: entries not in order at %q", e.Name)
		}
		buf = strconv.AppendUint(buf, uint64(e.Mode), 8)
		buf = append(buf, ' ')
		buf = append(buf, e.Name...)
		buf = append(buf, 0)
		buf = append(buf, e.Hash[:]...)
	}
	h, err := w.odb.store(plumbing.TreeObject, buf)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree: %w", err)
	}
	return h, nil
}

func (w *Writer) writeBlob(b []byte) (plumbing.Hash, error) {
	h, err := w.odb.store(plumbing.BlobObject, b)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write blob: %w", err)
	}
	return h, nil
}

// writeCommit stores a commit of tree with parents, encoded by go-git.
// The author date is when the (last) event happened, the committer date
// when it was committed.
func (w *Writer) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, msg string, when time.Time) (plumbing.Hash, error) {
	now := time.Now()
	if when.IsZero() {
		when = now
	}
	c := &object.Commit{
		Author:       object.Signature{Name: w.name, Email: w.email, When: when},
		Committer:    object.Signature{Name: w.name, Email: w.email, When: now},
		Message:      msg,
		TreeHash:     tree,
		ParentHashes: parents,
	}
	if w.sign != nil {
		if err := signCommit(c, w.sign); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	data, err := content(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	h, err := w.odb.store(plumbing.CommitObject, data)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write commit: %w", err)
	}
	return h, nil
}

// commitTree returns the root tree of commit c, zero for the zero commit.
func (w *Writer) commitTree(c plumbing.Hash) (plumbing.Hash, error) {
	if c.IsZero() {
		return plumbing.ZeroHash, nil
	}
	cm, err := object.GetCommit(w.odb, c)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", c, err)
	}
	return cm.TreeHash, nil
}

// mergeStats counts what a union took from each side.
type mergeStats struct {
	onlyOurs, onlyTheirs int // events on one side only
	differ               int // same name, different content
}

// errShape reports a tree that is not the layout this package writes.
var errShape = errors.New("unexpected tree entry")

// union writes the union of trees ours and theirs. Equal subtrees are
// taken as they are, so the cost is in what differs. Two different blobs
// under one name (the same event id encoded differently) cannot both be
// kept: the one with the smaller hash wins, so that every clone merging
// the same two sides gets the same tree.
func (t *trees) union(ours, theirs plumbing.Hash, st *mergeStats) (plumbing.Hash, error) {
	if ours == theirs {
		return ours, nil
	}
	if theirs.IsZero() {
		return ours, nil
	}
	if ours.IsZero() {
		return theirs, nil
	}
	a, err := t.get(ours)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	b, err := t.get(theirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	out := make([]object.TreeEntry, 0, max(len(a.Entries), len(b.Entries)))
	i, j := 0, 0
	for i < len(a.Entries) || j < len(b.Entries) {
		var ea, eb *object.TreeEntry
		if i < len(a.Entries) {
			ea = &a.Entries[i]
		}
		if j < len(b.Entries) {
			eb = &b.Entries[j]
		}
		switch {
		case eb == nil || (ea != nil && entryLess(ea, eb)):
			n, err := t.count(*ea)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			st.onlyOurs += n
			out = append(out, *ea)
			i++
			continue
		case ea == nil || entryLess(eb, ea):
			n, err := t.count(*eb)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			st.onlyTheirs += n
			out = append(out, *eb)
			j++
			continue
		}
		i++
		j++
		e := *ea
		switch {
		case ea.Hash == eb.Hash && ea.Mode == eb.Mode:
		case ea.Mode == filemode.Dir && eb.Mode == filemode.Dir:
			if e.Hash, err = t.union(ea.Hash, eb.Hash, st); err != nil {
				return plumbing.ZeroHash, err
			}
		case ea.Mode != filemode.Dir && eb.Mode != filemode.Dir:
			st.differ++
			if eb.Hash.String() < ea.Hash.String() {
				e = *eb
			}
		default:
			return plumbing.ZeroHash, fmt.Errorf("merge %s: %w: %q is a directory on one side only", ours, errShape, ea.Name)
		}
		out = append(out, e)
	}
	return t.w.writeTree(out)
}

// count returns the number of files under e (1 for a file), reading tree
// names only.
func (t *trees) count(e object.TreeEntry) (int, error) {
	if e.Mode != filemode.Dir {
		return 1, nil
	}
	// Not kept in t.m: a count may walk a whole side once.
	tr, err := object.GetTree(t.w.odb, e.Hash)
	if err != nil {
		return 0, fmt.Errorf("read tree %s: %w", e.Hash, err)
	}
	n := 0
	for _, c := range tr.Entries {
		k, err := t.count(c)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// signTimeout bounds one signature: ssh-keygen may wait on an agent.
const signTimeout = 30 * time.Second

// signCommit signs c as git signs a commit: the signature covers the
// commit encoded without one, and goes in its gpgsig header.
func signCommit(c *object.Commit, sign func(ctx context.Context, payload []byte) (string, error)) error {
	payload := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(payload); err != nil {
		return fmt.Errorf("encode commit: %w", err)
	}
	data, err := content(payload)
	if err != nil {
		return fmt.Errorf("encode commit: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), signTimeout)
	defer cancel()
	sig, err := sign(ctx, data)
	if err != nil {
		return fmt.Errorf("sign the workflow commit: %w", err)
	}
	c.PGPSignature = sig
	return nil
}
