package config

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"sync"
)

// The work packages cache file holds the packages of one file as
// LoadWorkPackagesBytes decoded them, with the lines of their entries,
// which Validate names:
//
//	magic "lgwp", version, key, count, package*, checksum
//	package: id, title, depends_on, priority, locks.files, locks.keys,
//	         locks.ttl (ns), locks.ttl_minutes, locks.reason, line,
//	         id line, files' lines, keys' lines, depends_on's lines
//
// A string is a uvarint length and its bytes; a number a varint; a list a
// uvarint, 0 for none (nil) or one more than its length, then its entries.
// The checksum is the CRC-32C of all before it, 4 bytes little-endian. A
// file that is not exactly that, whose checksum does not match, or that
// was written for another key (another file, other bytes, another shape
// of WorkPackage) is not read. Read without reflection, the largest file
// decodes in about half the time gob took.
const (
	packagesMagic   = "lgwp"
	packagesVersion = 1
	packagesExt     = ".bin"
)

// castagnoli is made on first use: a hook that reads no packages pays
// nothing for it.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// encodePackages writes ps, under key, as a cache file.
func encodePackages(key string, ps []WorkPackage) []byte {
	b := make([]byte, 0, 96*len(ps)+len(key)+16)
	b = append(b, packagesMagic...)
	b = binary.AppendUvarint(b, packagesVersion)
	b = appendString(b, key)
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for i := range ps {
		b = appendPackage(b, &ps[i])
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// appendPackage writes one package as the cache files hold it.
func appendPackage(b []byte, p *WorkPackage) []byte {
	b = appendString(b, p.ID)
	b = appendString(b, p.Title)
	b = appendStrings(b, p.DependsOn)
	b = binary.AppendVarint(b, int64(p.Priority))
	b = appendStrings(b, p.Locks.Files)
	b = appendStrings(b, p.Locks.Keys)
	b = binary.AppendVarint(b, int64(p.Locks.TTL))
	b = binary.AppendVarint(b, int64(p.Locks.TTLMinutes))
	b = appendString(b, p.Locks.Reason)
	b = binary.AppendVarint(b, int64(p.Line))
	b = binary.AppendVarint(b, int64(p.idLine))
	b = appendInts(b, p.fileLines)
	b = appendInts(b, p.keyLines)
	return appendInts(b, p.depLines)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, l []string) []byte {
	if l == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(l))+1)
	for _, s := range l {
		b = appendString(b, s)
	}
	return b
}

func appendInts(b []byte, l []int) []byte {
	if l == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(l))+1)
	for _, v := range l {
		b = binary.AppendVarint(b, int64(v))
	}
	return b
}

// decodePackages reads a cache file written by encodePackages under key;
// ok is false for any other bytes.
func decodePackages(data []byte, key string) (ps []WorkPackage, ok bool) {
	body, ok := checkedBody(data, packagesMagic)
	if !ok {
		return nil, false
	}
	// One string holds every string read: they share its bytes.
	r := packageReader{s: body}
	if r.readUvarint() != packagesVersion || r.readString() != key {
		return nil, false
	}
	n := r.readUvarint()
	if r.bad || n > MaxWorkPackages || n > uint64(len(r.s)) {
		return nil, false
	}
	ps = make([]WorkPackage, n)
	for i := range ps {
		r.readPackage(&ps[i])
		if r.bad {
			return nil, false
		}
	}
	if len(r.s) != 0 {
		return nil, false
	}
	return ps, true
}

// checkedBody is what follows magic in a cache file whose last 4 bytes
// are the CRC-32C (little-endian) of all before them; ok is false for a
// file without magic or whose checksum does not match.
func checkedBody(data []byte, magic string) (string, bool) {
	const sumLen = 4
	if len(data) < len(magic)+sumLen || !bytes.HasPrefix(data, []byte(magic)) {
		return "", false
	}
	body := data[:len(data)-sumLen]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(data[len(body):]) {
		return "", false
	}
	return string(body[len(magic):]), true
}

// packageReader reads the fields of a cache file from s; past the first
// one that is not well formed, bad is set and every read is zero.
type packageReader struct {
	s   string
	bad bool
}

// readPackage reads one package as appendPackage wrote it.
func (r *packageReader) readPackage(p *WorkPackage) {
	p.ID = r.readString()
	p.Title = r.readString()
	p.DependsOn = r.readStrings()
	p.Priority = r.readInt()
	p.Locks.Files = r.readStrings()
	p.Locks.Keys = r.readStrings()
	p.Locks.TTL = Duration(r.readVarint())
	p.Locks.TTLMinutes = r.readInt()
	p.Locks.Reason = r.readString()
	p.Line = r.readInt()
	p.idLine = r.readInt()
	p.fileLines = r.readInts()
	p.keyLines = r.readInts()
	p.depLines = r.readInts()
}

func (r *packageReader) fail() {
	r.bad, r.s = true, ""
}

func (r *packageReader) readUvarint() uint64 {
	var v uint64
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		c := r.s[i]
		if i == binary.MaxVarintLen64-1 && c > 1 {
			break // overflows 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.s = r.s[i+1:]
			return v
		}
	}
	r.fail()
	return 0
}

func (r *packageReader) readVarint() int64 {
	u := r.readUvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *packageReader) readInt() int {
	v := r.readVarint()
	if v < math.MinInt || v > math.MaxInt {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *packageReader) readString() string {
	n := r.readUvarint()
	if n > uint64(len(r.s)) {
		r.fail()
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

// count reads a list's length, and whether it is a list (not nil). Every
// entry takes a byte at least: a longer list is not well formed.
func (r *packageReader) readCount() (int, bool) {
	n := r.readUvarint()
	if n == 0 || r.bad {
		return 0, false
	}
	if n-1 > uint64(len(r.s)) {
		r.fail()
		return 0, false
	}
	return int(n - 1), true
}

func (r *packageReader) readStrings() []string {
	n, ok := r.readCount()
	if !ok {
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = r.readString()
	}
	return l
}

func (r *packageReader) readInts() []int {
	n, ok := r.readCount()
	if !ok {
		return nil
	}
	l := make([]int, n)
	for i := range l {
		l[i] = r.readInt()
	}
	return l
}
