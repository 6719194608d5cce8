package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/record"
)

// The directories of the lock tree, as in the file store.
var subdirs = []string{"keys", "patterns"}

func nameOf(key string) string { return record.Name(key) }

// dirOf is the directory of a record name: "", "keys" or "patterns".
func dirOf(name string) string {
	if d, _, ok := strings.Cut(name, "/"); ok {
		return d
	}
	return ""
}

// load reads the lock tree of commit oid. Records whose blob was read
// before are not read again. Anything in the tree that lockgate does not
// write there is an error: the state cannot be judged.
func (s *Store) load(ctx context.Context, oid string) (*table, error) {
	es, err := gitexec.ListTree(ctx, s.repo, oid)
	if err != nil {
		return nil, s.unavailable("read "+oid, s.gitError(err))
	}
	t := &table{commit: oid, recs: make(map[string]*treeRecord, len(es)), trees: map[string]string{}}
	var need, names []string
	fenceOID, stampOID := "", ""
	for _, e := range es {
		switch {
		case e.Type == "tree" && slices.Contains(subdirs, e.Path):
			t.trees[e.Path] = e.OID
		case e.Path == fenceName && e.Type == "blob":
			fenceOID = e.OID
		case e.Path == stampName && e.Type == "blob":
			stampOID = e.OID
		case e.Type == "blob" && e.Mode == "100644" && validName(e.Path):
			if r, ok := s.byOID[e.OID]; ok && r.name == e.Path {
				t.recs[e.Path] = r
				continue
			}
			need, names = append(need, e.OID), append(names, e.Path)
		default:
			return nil, s.unavailable("read "+oid, fmt.Errorf("%s %s in the lock tree is not a lock record: only lockgate may write %s", e.Type, e.Path, s.opts.Ref))
		}
	}
	if fenceOID != "" {
		need, names = append(need, fenceOID), append(names, fenceName)
	}
	t.stamp = Stamp{Format: formatChain}
	if stampOID != "" {
		need, names = append(need, stampOID), append(names, stampName)
	}
	blobs, err := gitexec.ReadBlobs(ctx, s.repo, need)
	if err != nil {
		return nil, s.unavailable("read "+oid, s.gitError(err))
	}
	for i, data := range blobs {
		switch names[i] {
		case fenceName:
			if t.fence, err = parseFence(data); err != nil {
				return nil, s.unavailable("read "+oid, err)
			}
			continue
		case stampName:
			if t.stamp, err = parseStamp(data); err != nil {
				return nil, s.unavailable("read "+oid, err)
			}
			continue
		}
		t.recs[names[i]] = newRecord(names[i], need[i], data)
	}
	return t, nil
}

// validName reports a name lockgate writes records at.
func validName(name string) bool {
	d, base := path.Split(name)
	if d != "" && !slices.Contains(subdirs, strings.TrimSuffix(d, "/")) {
		return false
	}
	stem, ok := strings.CutSuffix(base, ".lock")
	return ok && stem != "" && !strings.HasPrefix(stem, ".")
}

// objectWriter writes loose objects into the clone's object database.
type objectWriter struct {
	st *filesystem.Storage
}

// objects returns the writer; the caller holds s.objMu (go-git's storage
// is not safe for concurrent use).
func (s *Store) objects() *objectWriter {
	if s.obj == nil {
		st := filesystem.NewStorageWithOptions(osfs.New(s.opts.CommonDir), cache.NewObjectLRU(cache.MiByte), filesystem.Options{})
		s.obj = &objectWriter{st: st}
	}
	return s.obj
}

func (w *objectWriter) write(typ plumbing.ObjectType, data []byte) (string, error) {
	obj := w.st.NewEncodedObject()
	obj.SetType(typ)
	obj.SetSize(int64(len(data)))
	wr, err := obj.Writer()
	if err != nil {
		return "", err
	}
	if _, err := wr.Write(data); err != nil {
		return "", err
	}
	if err := wr.Close(); err != nil {
		return "", err
	}
	h, err := w.st.SetEncodedObject(obj)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", typ, err)
	}
	return h.String(), nil
}

func (w *objectWriter) encode(o interface {
	Encode(plumbing.EncodedObject) error
}) (string, error) {
	obj := w.st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return "", err
	}
	h, err := w.st.SetEncodedObject(obj)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", obj.Type(), err)
	}
	return h.String(), nil
}

// commit writes the objects of t with v's changes applied and returns the
// new table and its commit. The commit has no parent: the ref holds the
// present only, so that the remote's gc drops the states before it and a
// fresh clone fetches the live locks, however many changes made them. Its
// stamp, one generation after t's, tells a later state from an earlier
// one; the lock log keeps what happened.
func (s *Store) commit(t *table, v *view) (*table, string, error) {
	stamp, err := t.stamp.next()
	if err != nil {
		return nil, "", err
	}
	s.objMu.Lock()
	defer s.objMu.Unlock()
	w := s.objects()
	next := &table{stamp: stamp, fence: v.fence, recs: maps.Clone(t.recs), trees: map[string]string{}}
	touched := map[string]bool{}
	for _, name := range v.order {
		r := v.changed[name]
		touched[dirOf(name)] = true
		if r == nil {
			delete(next.recs, name)
			continue
		}
		oid, err := w.write(plumbing.BlobObject, r.data)
		if err != nil {
			return nil, "", err
		}
		l, _ := r.get()
		next.recs[name] = written(name, oid, r.data, l)
	}
	byDir := map[string][]object.TreeEntry{}
	for name, r := range next.recs {
		d := dirOf(name)
		byDir[d] = append(byDir[d], object.TreeEntry{Name: path.Base(name), Mode: filemode.Regular, Hash: plumbing.NewHash(r.oid)})
	}
	top := byDir[""]
	for _, d := range subdirs {
		if len(byDir[d]) == 0 {
			continue
		}
		oid := t.trees[d]
		if touched[d] || oid == "" {
			var err error
			if oid, err = w.encode(&object.Tree{Entries: sortEntries(byDir[d])}); err != nil {
				return nil, "", err
			}
		}
		next.trees[d] = oid
		top = append(top, object.TreeEntry{Name: d, Mode: filemode.Dir, Hash: plumbing.NewHash(oid)})
	}
	if next.fence > 0 {
		oid, err := w.write(plumbing.BlobObject, []byte(strconv.FormatUint(next.fence, 10)+"\n"))
		if err != nil {
			return nil, "", err
		}
		top = append(top, object.TreeEntry{Name: fenceName, Mode: filemode.Regular, Hash: plumbing.NewHash(oid)})
	}
	soid, err := w.write(plumbing.BlobObject, stamp.encode())
	if err != nil {
		return nil, "", err
	}
	top = append(top, object.TreeEntry{Name: stampName, Mode: filemode.Regular, Hash: plumbing.NewHash(soid)})
	tree, err := w.encode(&object.Tree{Entries: sortEntries(top)})
	if err != nil {
		return nil, "", err
	}
	now := time.Now()
	sig := object.Signature{Name: "lockgate", Email: "lockgate@localhost", When: now}
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: plumbing.NewHash(tree), Message: message(v.summary, v.changes) + writeLine()}
	if s.opts.Sign != nil {
		if err := s.signCommit(c); err != nil {
			return nil, "", err
		}
	}
	oid, err := w.encode(c)
	if err != nil {
		return nil, "", err
	}
	next.commit = oid
	return next, oid, nil
}

// writeTrailer starts the last line of a state's commit message, which
// names the write with a random id. Two writers that make the same change
// of the same state in the same second would otherwise write the same
// commit, and the second push would find the remote "up to date" without
// asking its lease: both would take the change for their own (a lock
// released twice, logged by both).
const writeTrailer = "Lockgate-Write: "

// writeLine is the message's line that names this write.
func writeLine() string {
	return fmt.Sprintf("\n%s%016x\n", writeTrailer, rand.Uint64())
}

// sortEntries orders tree entries as git does: by name, a directory as if
// its name ended in '/'.
func sortEntries(es []object.TreeEntry) []object.TreeEntry {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(es, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	return es
}

// message is the commit message of a change: what it did, the first
// lines in the subject.
func message(summary []string, changes []change) string {
	var b bytes.Buffer
	subject := strings.Join(summary, ", ")
	if len(summary) > 3 {
		subject = strings.Join(summary[:3], ", ") + fmt.Sprintf(" and %d more", len(summary)-3)
	}
	b.WriteString(strings.ToValidUTF8(strings.ReplaceAll(subject, "\n", " "), "?"))
	b.WriteString("\n")
	if len(summary) > 3 {
		b.WriteString("\n")
		for _, l := range summary {
			b.WriteString(strings.ToValidUTF8(strings.ReplaceAll(l, "\n", " "), "?"))
			b.WriteString("\n")
		}
	}
	if len(changes) > 0 {
		b.WriteString("\n")
		for _, l := range changeLines(changes) {
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// signCommit signs a state's commit as git's commit -S does: the
// signature covers the commit encoded without one (workflow.signed).
func (s *Store) signCommit(c *object.Commit) error {
	payload := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(payload); err != nil {
		return fmt.Errorf("encode the lock table's commit: %w", err)
	}
	rd, err := payload.Reader()
	if err != nil {
		return fmt.Errorf("encode the lock table's commit: %w", err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return fmt.Errorf("encode the lock table's commit: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	sig, err := s.opts.Sign(ctx, data)
	if err != nil {
		return fmt.Errorf("sign the lock table's state: %w", err)
	}
	c.PGPSignature = sig
	return nil
}
