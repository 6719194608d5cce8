package config

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ClaimOrder is a work packages file's packages in claim order, checked
// once and kept in the clone's cache, each decoded only when asked for: a
// claim reads the packages it passes over, not the whole file, so that it
// costs about the same with 10 or 10,000 packages. It also finds a
// package by its id, and the packages that lock a key, without decoding
// the others: what `done` needs.
//
// The cache file is
//
//	magic "lgco", version, key, stamp key,
//	count, offset*, by id*, keyed, key count, key offset*, key entries, packages,
//	checksum
//
// with one 4-byte little-endian offset per package (where its entry starts
// among the packages, encoded as the work packages cache encodes them, see
// encodePackages), the packages' positions sorted by id (4 bytes each),
// and, when keyed is 1, the key index: entries (a key's identity as the
// caller gave it, and the 4-byte position of a package that locks it)
// sorted by key, each found by its offset. Strings and counts are as in
// the work packages cache; the checksum is its CRC-32C. The key covers
// the file's bytes and the checks the caller ran on them: a file changed,
// or a policy that judges its keys otherwise, makes a new one. The stamp
// key covers the file's stamp instead of its bytes (its size, times and
// inode, once it has not changed for a while; see fileStamp), so that a
// claim need not read and hash 10,000 packages' worth of YAML to know the
// order is the file's, as git trusts its index for a file whose stat
// data did not change.
type ClaimOrder struct {
	// Path is the work packages file.
	Path string
	// Key names the file's bytes and the checks they passed; what is kept
	// of positions in this order names it, to be told apart from another
	// order's.
	Key string
	claimOrderSections
}

// claimOrderSections are what a claim order file holds after its keys.
type claimOrderSections struct {
	stampKey string
	offs     string // 4 bytes a package: where its entry starts in body
	byID     string // 4 bytes a package: positions, sorted by id
	keyed    bool   // the key index was made
	keyOffs  string // 4 bytes a key entry: where it starts in keys
	keys     string // key entries: identity, position
	body     string // the packages' entries
}

const (
	claimOrderMagic   = "lgco"
	claimOrderVersion = 2
)

// clock is the time a file's stamp is judged at (tests move it on).
var clock = time.Now

// Len is the number of packages.
func (c *ClaimOrder) Len() int { return len(c.offs) / 4 }

// u32 is the i-th 4-byte little-endian number of s.
func u32(s string, i int) int {
	b := s[4*i : 4*i+4]
	return int(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
}

// At decodes the i-th package in claim order.
func (c *ClaimOrder) At(i int) (*WorkPackage, error) {
	if i < 0 || i >= c.Len() {
		return nil, fmt.Errorf("claim order of %s: no package %d of %d", c.Path, i, c.Len())
	}
	off := u32(c.offs, i)
	if off > len(c.body) {
		return nil, fmt.Errorf("claim order of %s: package %d is out of the file", c.Path, i)
	}
	r := packageReader{s: c.body[off:]}
	p := &WorkPackage{}
	r.readPackage(p)
	if r.bad {
		return nil, fmt.Errorf("claim order of %s: package %d does not decode", c.Path, i)
	}
	return p, nil
}

// idAt reads the id of the i-th package only ("" when it cannot).
func (c *ClaimOrder) idAt(i int) string {
	if i < 0 || i >= c.Len() {
		return ""
	}
	off := u32(c.offs, i)
	if off > len(c.body) {
		return ""
	}
	r := packageReader{s: c.body[off:]}
	return r.readString()
}

// Find returns package id and its position in claim order.
func (c *ClaimOrder) Find(id string) (*WorkPackage, int, bool) {
	n := c.Len()
	k := sort.Search(n, func(j int) bool { return c.idAt(u32(c.byID, j)) >= id })
	if k == n {
		return nil, 0, false
	}
	pos := u32(c.byID, k)
	if pos >= n || c.idAt(pos) != id {
		return nil, 0, false
	}
	p, err := c.At(pos)
	if err != nil {
		return nil, 0, false
	}
	return p, pos, true
}

// Locking returns the positions of the packages that lock key (an
// identity as the keys function given to LoadClaimOrderCached returned
// it); ok is false when the order has no key index.
func (c *ClaimOrder) Locking(key string) (positions []int, ok bool) {
	if !c.keyed {
		return nil, false
	}
	m := len(c.keyOffs) / 4
	entry := func(j int) (string, int) {
		off := u32(c.keyOffs, j)
		if off > len(c.keys) {
			return "", -1
		}
		r := packageReader{s: c.keys[off:]}
		k := r.readString()
		if r.bad || len(r.s) < 4 {
			return "", -1
		}
		return k, u32(r.s, 0)
	}
	for j := sort.Search(m, func(j int) bool { k, _ := entry(j); return k >= key }); j < m; j++ {
		k, pos := entry(j)
		if k != key {
			break
		}
		if pos >= 0 && pos < c.Len() {
			positions = append(positions, pos)
		}
	}
	return positions, true
}

// LoadClaimOrderCached returns the packages of the work packages file at
// path in claim order. checks names what the caller checks a file's
// packages against (its policy); load, called when the cache in cacheDir
// holds no order for these bytes and these checks, reads and checks the
// file. keysOf (nil: none) gives the identities of the keys a package
// locks, for Locking; when it fails for a package the order has no key
// index. A file that does not load is never cached.
func LoadClaimOrderCached(path, cacheDir, checks string, load func() (*WorkPackages, error), keysOf func(*WorkPackage) ([]string, error)) (*ClaimOrder, error) {
	ok, err := usableCache(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("claim order cache: %w", err)
	}
	file := filepath.Join(cacheDir, "order-"+digest(path)[:16]+packagesExt)
	var cached []byte
	stampKey := ""
	if ok {
		if cached, err = readCacheFile(file); err != nil {
			return nil, fmt.Errorf("claim order cache: %w", err)
		}
		if fi, err := os.Stat(path); err == nil {
			if stamp := fileStamp(fi, clock()); stamp != "" {
				stampKey = digest(packagesSchema(), "\x00", path, "\x00", stamp, "\x00", checks)
			}
		}
		if c, ok := decodeClaimOrder(cached, "", stampKey); ok && stampKey != "" {
			c.Path = path
			return c, nil
		}
	}
	data, err := readPolicy(path, MaxWorkPackagesBytes, "work packages")
	if err != nil {
		return nil, err
	}
	key := digest(packagesSchema(), "\x00", path, "\x00", string(data), "\x00", checks)
	if c, ok := decodeClaimOrder(cached, key, ""); ok {
		c.Path = path
		if stampKey != "" { // the file settled since: stamp the order
			c.stampKey = stampKey
			_ = WriteCacheFile(cacheDir, file, encodeClaimOrder(c.Key, c.claimOrderSections))
		}
		return c, nil
	}
	wps, err := load()
	if err != nil {
		return nil, err
	}
	sec := claimOrderOf(wps.ClaimOrder(), keysOf)
	sec.stampKey = stampKey
	b := encodeClaimOrder(key, sec)
	c, decoded := decodeClaimOrder(b, key, "")
	if !decoded {
		return nil, errors.New("claim order: the encoding does not read back")
	}
	c.Path = path
	if ok {
		if err := WriteCacheFile(cacheDir, file, b); err != nil {
			return nil, fmt.Errorf("claim order cache: %w", err)
		}
	}
	return c, nil
}

// claimOrderOf lays out ps (in claim order) and their keys.
func claimOrderOf(ps []*WorkPackage, keysOf func(*WorkPackage) ([]string, error)) claimOrderSections {
	var body []byte
	offs := make([]byte, 0, 4*len(ps))
	for _, p := range ps {
		offs = binary.LittleEndian.AppendUint32(offs, uint32(len(body)))
		body = appendPackage(body, p)
	}
	pos := make([]int, len(ps))
	for i := range pos {
		pos[i] = i
	}
	sort.Slice(pos, func(a, b int) bool { return ps[pos[a]].ID < ps[pos[b]].ID })
	byID := make([]byte, 0, 4*len(ps))
	for _, i := range pos {
		byID = binary.LittleEndian.AppendUint32(byID, uint32(i))
	}
	sec := claimOrderSections{offs: string(offs), byID: string(byID), body: string(body)}
	if keysOf == nil {
		return sec
	}
	type entry struct {
		key string
		pos int
	}
	var es []entry
	for i, p := range ps {
		ks, err := keysOf(p)
		if err != nil {
			return sec // no key index: Locking says so
		}
		for _, k := range ks {
			es = append(es, entry{k, i})
		}
	}
	sort.Slice(es, func(a, b int) bool {
		return es[a].key < es[b].key || es[a].key == es[b].key && es[a].pos < es[b].pos
	})
	var keys, keyOffs []byte
	for _, e := range es {
		keyOffs = binary.LittleEndian.AppendUint32(keyOffs, uint32(len(keys)))
		keys = appendString(keys, e.key)
		keys = binary.LittleEndian.AppendUint32(keys, uint32(e.pos))
	}
	sec.keyed, sec.keyOffs, sec.keys = true, string(keyOffs), string(keys)
	return sec
}

func encodeClaimOrder(key string, sec claimOrderSections) []byte {
	b := make([]byte, 0, len(claimOrderMagic)+len(key)+len(sec.offs)*2+len(sec.keyOffs)+len(sec.keys)+len(sec.body)+64)
	b = append(b, claimOrderMagic...)
	b = binary.AppendUvarint(b, claimOrderVersion)
	b = appendString(b, key)
	b = appendString(b, sec.stampKey)
	b = binary.AppendUvarint(b, uint64(len(sec.offs)/4))
	b = append(b, sec.offs...)
	b = append(b, sec.byID...)
	keyed := uint64(0)
	if sec.keyed {
		keyed = 1
	}
	b = binary.AppendUvarint(b, keyed)
	b = binary.AppendUvarint(b, uint64(len(sec.keyOffs)/4))
	b = append(b, sec.keyOffs...)
	b = appendString(b, sec.keys)
	b = appendString(b, sec.body)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// decodeClaimOrder reads a file encodeClaimOrder wrote under key, or
// with key "" under stampKey (not ""); ok is false for any other bytes.
// The sections are checked by the checksum and their sizes here; the
// entries are decoded (and checked) when read.
func decodeClaimOrder(data []byte, key, stampKey string) (*ClaimOrder, bool) {
	body, ok := checkedBody(data, claimOrderMagic)
	if !ok {
		return nil, false
	}
	r := packageReader{s: body}
	if r.readUvarint() != claimOrderVersion {
		return nil, false
	}
	c := &ClaimOrder{}
	c.Key, c.stampKey = r.readString(), r.readString()
	if key != "" && c.Key != key || key == "" && (stampKey == "" || c.stampKey != stampKey) {
		return nil, false
	}
	fixed := func(n uint64) string {
		if r.bad || n > uint64(len(r.s)) {
			r.fail()
			return ""
		}
		s := r.s[:n]
		r.s = r.s[n:]
		return s
	}
	n := r.readUvarint()
	if n > MaxWorkPackages {
		return nil, false
	}
	c.offs, c.byID = fixed(4*n), fixed(4*n)
	keyed := r.readUvarint()
	m := r.readUvarint()
	c.keyOffs = fixed(4 * min(m, uint64(len(r.s))))
	c.keys, c.body = r.readString(), r.readString()
	if r.bad || len(r.s) != 0 || keyed > 1 || uint64(len(c.keyOffs)) != 4*m {
		return nil, false
	}
	c.keyed = keyed == 1
	return c, true
}
