package workflow

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"container/list"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// odb reads objects at a cost that does not grow with the repository: a
// loose object is one file, a packed one a binary search in the one
// fan-out bucket of each pack's .idx, read with ReadAt. go-git's own
// ObjectStorage decodes and checksums every .idx whole on first use and
// maps every offset of a pack on the first packed read: tens of
// milliseconds per process at 100,000 events, which a one-event commit
// from the CLI cannot afford. Writes, refs and config still go through
// the embedded go-git storage; only EncodedObject is replaced, so go-git's
// object decoders (object.GetTree, GetCommit) read through odb.
type odb struct {
	*filesystem.Storage
	dir string // the objects directory

	mu    sync.Mutex
	packs []*packIdx // nil until first needed
	alts  []*odb     // alternates, nil until first needed
	altOK bool
	cache cache.Object
	bases baseCache
	zr    io.ReadCloser // a zlib reader, reset for each packed object
	depth int           // alternates nesting
}

func newODB(st *filesystem.Storage, objectsDir string) *odb {
	return &odb{Storage: st, dir: objectsDir, cache: cache.NewObjectLRU(16 * cache.MiByte)}
}

// baseCache keeps recently resolved delta bases by pack and offset, up to
// baseCacheBytes, least recently used out first.
type baseCache struct {
	size int
	ll   list.List
	m    map[baseKey]*list.Element
}

type baseKey struct {
	p   *packIdx
	off int64
}

type baseEntry struct {
	key  baseKey
	typ  plumbing.ObjectType
	data []byte
}

const baseCacheBytes = 32 << 20

func (c *baseCache) get(p *packIdx, off int64) (plumbing.ObjectType, []byte, bool) {
	el, ok := c.m[baseKey{p, off}]
	if !ok {
		return 0, nil, false
	}
	c.ll.MoveToFront(el)
	e := el.Value.(*baseEntry)
	return e.typ, e.data, true
}

func (c *baseCache) put(p *packIdx, off int64, typ plumbing.ObjectType, data []byte) {
	if len(data) > baseCacheBytes/4 {
		return
	}
	k := baseKey{p, off}
	if c.m == nil {
		c.m = make(map[baseKey]*list.Element)
	}
	if _, ok := c.m[k]; ok {
		return
	}
	c.m[k] = c.ll.PushFront(&baseEntry{key: k, typ: typ, data: data})
	c.size += len(data)
	for c.size > baseCacheBytes {
		el := c.ll.Back()
		e := el.Value.(*baseEntry)
		c.ll.Remove(el)
		delete(c.m, e.key)
		c.size -= len(e.data)
	}
}

// clear forgets every base (the packs they came from are being closed).
func (c *baseCache) clear() {
	c.ll.Init()
	c.m = nil
	c.size = 0
}

// packIdx is one pack and its version 2 index, both kept open.
type packIdx struct {
	idx, pack *os.File
	fanout    [256]uint32
	n         uint32

	// After bulkAfter lookups (a Sync, an Events walk) the name and
	// offset tables are read whole, once: from then on a lookup costs no
	// system call. A one-event commit never gets there.
	lookups int
	names   []byte // n × 20, when loaded
	offsets []byte // n × 4, then the 8-byte large offsets
}

const bulkAfter = 256

const idxHeader = 8 + 256*4 // magic, version, fan-out

func openPack(idxPath string) (*packIdx, error) {
	f, err := os.Open(idxPath)
	if err != nil {
		return nil, err
	}
	var hdr [idxHeader]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", idxPath, err)
	}
	if !bytes.Equal(hdr[:4], []byte{0xff, 't', 'O', 'c'}) || binary.BigEndian.Uint32(hdr[4:8]) != 2 {
		f.Close()
		return nil, fmt.Errorf("%s: %w", idxPath, errIdxVersion)
	}
	p := &packIdx{idx: f}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(hdr[8+4*i:])
	}
	p.n = p.fanout[255]
	p.pack, err = os.Open(strings.TrimSuffix(idxPath, ".idx") + ".pack")
	if err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

var errIdxVersion = errors.New("not a version 2 pack index")

func (p *packIdx) close() {
	p.idx.Close()
	p.pack.Close()
}

// find returns the offset of h in the pack, or -1.
func (p *packIdx) find(h plumbing.Hash) (int64, error) {
	lo := uint32(0)
	if h[0] > 0 {
		lo = p.fanout[h[0]-1]
	}
	hi := p.fanout[h[0]]
	if hi <= lo || hi > p.n {
		return -1, nil
	}
	if p.names == nil {
		if p.lookups++; p.lookups > bulkAfter {
			if err := p.loadTables(); err != nil {
				return -1, err
			}
		}
	}
	var names []byte
	if p.names != nil {
		names = p.names[lo*20 : hi*20]
	} else {
		names = make([]byte, (hi-lo)*20)
		if _, err := p.idx.ReadAt(names, idxHeader+int64(lo)*20); err != nil {
			return -1, fmt.Errorf("read pack index: %w", err)
		}
	}
	k := sort.Search(int(hi-lo), func(i int) bool { return bytes.Compare(names[i*20:i*20+20], h[:]) >= 0 })
	if k == int(hi-lo) || !bytes.Equal(names[k*20:k*20+20], h[:]) {
		return -1, nil
	}
	pos := int64(lo) + int64(k)
	var b [8]byte
	if err := p.readOffsets(b[:4], pos*4); err != nil {
		return -1, err
	}
	off := binary.BigEndian.Uint32(b[:4])
	if off&0x80000000 == 0 {
		return int64(off), nil
	}
	if err := p.readOffsets(b[:], int64(p.n)*4+int64(off&0x7fffffff)*8); err != nil {
		return -1, err
	}
	return int64(binary.BigEndian.Uint64(b[:])), nil
}

// readOffsets reads from the offset tables (4-byte offsets, then 8-byte
// large ones), at rel bytes from their start.
func (p *packIdx) readOffsets(b []byte, rel int64) error {
	if p.offsets != nil {
		if rel < 0 || rel+int64(len(b)) > int64(len(p.offsets)) {
			return errors.New("read pack index: offset out of range")
		}
		copy(b, p.offsets[rel:])
		return nil
	}
	if _, err := p.idx.ReadAt(b, idxHeader+int64(p.n)*24+rel); err != nil {
		return fmt.Errorf("read pack index: %w", err)
	}
	return nil
}

// loadTables reads the name and offset tables whole.
func (p *packIdx) loadTables() error {
	fi, err := p.idx.Stat()
	if err != nil {
		return fmt.Errorf("read pack index: %w", err)
	}
	// names, CRCs, offsets, large offsets, then two 20-byte checksums.
	offStart := idxHeader + int64(p.n)*24
	offEnd := fi.Size() - 40
	if offEnd < offStart+int64(p.n)*4 {
		return errors.New("read pack index: truncated")
	}
	names := make([]byte, int64(p.n)*20)
	if _, err := p.idx.ReadAt(names, idxHeader); err != nil {
		return fmt.Errorf("read pack index: %w", err)
	}
	offsets := make([]byte, offEnd-offStart)
	if _, err := p.idx.ReadAt(offsets, offStart); err != nil {
		return fmt.Errorf("read pack index: %w", err)
	}
	p.names, p.offsets = names, offsets
	return nil
}

// maxDeltaDepth bounds a delta chain (git's default is 50; a loop in a
// damaged pack must not recurse for ever).
const maxDeltaDepth = 10000

// read returns the object at off: its type and inflated content, with
// deltas resolved (bases by offset in this pack, or by hash anywhere).
func (p *packIdx) read(db *odb, off int64, depth int) (typ plumbing.ObjectType, data []byte, err error) {
	if depth > maxDeltaDepth {
		return 0, nil, errors.New("delta chain too deep")
	}
	if depth > 0 {
		// A delta base: objects deltified against one another share their
		// bases, so a walk over many of them resolves each base once.
		if typ, data, ok := db.bases.get(p, off); ok {
			return typ, data, nil
		}
		defer func() {
			if err == nil {
				db.bases.put(p, off, typ, data)
			}
		}()
	}
	br := bufio.NewReaderSize(io.NewSectionReader(p.pack, off, 1<<62), 512)
	c, err := br.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	typ = plumbing.ObjectType((c >> 4) & 7)
	size := uint64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = br.ReadByte(); err != nil {
			return 0, nil, err
		}
		if shift > 56 {
			return 0, nil, errors.New("object size overflows")
		}
		size |= uint64(c&0x7f) << shift
	}
	var baseType plumbing.ObjectType
	var base []byte
	delta := true
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		delta = false
	case plumbing.OFSDeltaObject:
		if c, err = br.ReadByte(); err != nil {
			return 0, nil, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = br.ReadByte(); err != nil {
				return 0, nil, err
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if rel <= 0 || rel > off {
			return 0, nil, fmt.Errorf("bad delta base offset %d at %d", rel, off)
		}
		if baseType, base, err = p.read(db, off-rel, depth+1); err != nil {
			return 0, nil, err
		}
	case plumbing.REFDeltaObject:
		var h plumbing.Hash
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return 0, nil, err
		}
		obj, err := db.get(h, depth+1)
		if err != nil {
			return 0, nil, fmt.Errorf("delta base %s: %w", h, err)
		}
		baseType = obj.Type()
		if base, err = content(obj); err != nil {
			return 0, nil, err
		}
	default:
		return 0, nil, fmt.Errorf("bad object type %d at offset %d", typ, off)
	}
	if size > 1<<31 {
		return 0, nil, fmt.Errorf("object of %d bytes at offset %d: too large", size, off)
	}
	if db.zr == nil {
		if db.zr, err = zlib.NewReader(br); err != nil {
			db.zr = nil
			return 0, nil, fmt.Errorf("inflate object at offset %d: %w", off, err)
		}
	} else if err := db.zr.(zlib.Resetter).Reset(br, nil); err != nil {
		return 0, nil, fmt.Errorf("inflate object at offset %d: %w", off, err)
	}
	data = make([]byte, size)
	if _, err := io.ReadFull(db.zr, data); err != nil {
		return 0, nil, fmt.Errorf("inflate object at offset %d: %w", off, err)
	}
	if !delta {
		return typ, data, nil
	}
	out, err := packfile.PatchDelta(base, data)
	if err != nil {
		return 0, nil, fmt.Errorf("apply delta at offset %d: %w", off, err)
	}
	return baseType, out, nil
}

func content(obj plumbing.EncodedObject) ([]byte, error) {
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// EncodedObject returns object h (of type t, or any with AnyObject).
func (db *odb) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	obj, err := db.get(h, 0)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && obj.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return obj, nil
}

// get looks in the cache, the loose objects, the packs (read again once
// when h is in none of them: a fetch or gc may have written new ones) and
// the alternates. It holds db.mu.
func (db *odb) get(h plumbing.Hash, depth int) (plumbing.EncodedObject, error) {
	if obj, ok := db.cache.Get(h); ok {
		return obj, nil
	}
	obj, err := db.loose(h)
	if err == nil || !errors.Is(err, plumbing.ErrObjectNotFound) {
		return db.keep(obj, err)
	}
	for round := 0; round < 2; round++ {
		if db.packs == nil || round == 1 {
			if err := db.loadPacks(); err != nil {
				return nil, err
			}
		}
		for _, p := range db.packs {
			off, err := p.find(h)
			if err != nil {
				return nil, err
			}
			if off < 0 {
				continue
			}
			typ, data, err := p.read(db, off, depth)
			if err != nil {
				return nil, fmt.Errorf("read object %s: %w", h, err)
			}
			return db.keep(memObject(typ, data), nil)
		}
		if round == 0 {
			// Packed since we listed the packs? Then it may also have
			// been loose a moment ago and deleted by the repack.
			if obj, err := db.loose(h); err == nil {
				return db.keep(obj, nil)
			}
		}
	}
	for _, alt := range db.alternates() {
		alt.mu.Lock()
		obj, err := alt.get(h, depth)
		alt.mu.Unlock()
		if err == nil {
			return db.keep(obj, nil)
		}
	}
	return nil, plumbing.ErrObjectNotFound
}

func (db *odb) keep(obj plumbing.EncodedObject, err error) (plumbing.EncodedObject, error) {
	if err != nil {
		return nil, err
	}
	db.cache.Put(obj)
	return obj, nil
}

func memObject(t plumbing.ObjectType, data []byte) plumbing.EncodedObject {
	obj := &plumbing.MemoryObject{}
	obj.SetType(t)
	_, _ = obj.Write(data) // a MemoryObject's Write cannot fail
	return obj
}

// loose reads objects/xx/yyyy….
func (db *odb) loose(h plumbing.Hash) (plumbing.EncodedObject, error) {
	hx := h.String()
	f, err := os.Open(filepath.Join(db.dir, hx[:2], hx[2:]))
	if errors.Is(err, os.ErrNotExist) {
		return nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read loose object %s: %w", hx, err)
	}
	defer r.Close()
	t, size, err := r.Header()
	if err != nil {
		return nil, fmt.Errorf("read loose object %s: %w", hx, err)
	}
	if size < 0 || size > 1<<31 {
		return nil, fmt.Errorf("loose object %s: bad size %d", hx, size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("read loose object %s: %w", hx, err)
	}
	return memObject(t, data), nil
}

// loadPacks lists objects/pack/*.idx again, keeping the packs already open.
func (db *odb) loadPacks() error {
	names, err := filepath.Glob(filepath.Join(db.dir, "pack", "pack-*.idx"))
	if err != nil {
		return err
	}
	open := make(map[string]*packIdx, len(db.packs))
	for _, p := range db.packs {
		open[p.idx.Name()] = p
	}
	packs := make([]*packIdx, 0, len(names))
	for _, name := range names {
		if p, ok := open[name]; ok {
			packs = append(packs, p)
			delete(open, name)
			continue
		}
		p, err := openPack(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed by a concurrent repack
		}
		if err != nil {
			return fmt.Errorf("open pack: %w", err)
		}
		packs = append(packs, p)
	}
	for _, p := range open {
		p.close() // gone from the directory
		db.bases.clear()
	}
	db.packs = packs
	return nil
}

// alternates returns the object stores named in objects/info/alternates.
func (db *odb) alternates() []*odb {
	if db.altOK || db.depth > 5 {
		return db.alts
	}
	db.altOK = true
	b, err := os.ReadFile(filepath.Join(db.dir, "info", "alternates"))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(db.dir, line)
		}
		db.alts = append(db.alts, &odb{Storage: db.Storage, dir: line, cache: db.cache, depth: db.depth + 1})
	}
	return db.alts
}

// reindex lists the packs again (after a fetch wrote one).
func (db *odb) reindex() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.loadPacks()
}

// Close closes the open packs.
func (db *odb) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, p := range db.packs {
		p.close()
	}
	db.packs = nil
	db.bases.clear()
	for _, a := range db.alts {
		a.Close()
	}
	return nil
}

// zlibWriters are reused: a deflate writer's state is large to allocate.
var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(io.Discard, zlib.NoCompression) // a valid level: no error
	return zw
}}

// store writes a loose object as git does: "<type> <size>\0<content>" in
// zlib format in objects/xx/yyyy…, through a temporary file renamed into
// place, so that no reader sees it half written. An object that is
// already loose is not written again. The zlib stream is stored, not
// compressed (git's core.looseCompression=0): tree entries are mostly
// hashes, which do not compress, the blobs are small, and git compresses
// everything when it packs. The hash is crypto/sha1: go-git's sha1cd
// detects collision attacks on content it did not make, several times
// slower, for nothing here.
func (db *odb) store(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	hdr := []byte(fmt.Sprintf("%s %d\x00", t, len(data)))
	sum := sha1.New()
	sum.Write(hdr)
	sum.Write(data)
	var h plumbing.Hash
	copy(h[:], sum.Sum(nil))
	hx := h.String()
	dir := filepath.Join(db.dir, hx[:2])
	final := filepath.Join(dir, hx[2:])
	if _, err := os.Lstat(final); err == nil {
		return h, nil
	}
	tmp, err := os.CreateTemp(db.dir, "tmp_obj_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(tmp)
	_, err = zw.Write(hdr)
	if err == nil {
		_, err = zw.Write(data)
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	zlibWriters.Put(zw)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.Chmod(tmp.Name(), 0o444)
		err = os.Rename(tmp.Name(), final)
		if errors.Is(err, os.ErrNotExist) {
			if err = os.MkdirAll(dir, 0o777); err == nil {
				err = os.Rename(tmp.Name(), final)
			}
		}
	}
	if err != nil {
		os.Remove(tmp.Name())
		return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", hx, err)
	}
	db.mu.Lock()
	db.cache.Put(memObject(t, data))
	db.mu.Unlock()
	return h, nil
}
