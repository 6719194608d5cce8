package config

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"
)

// ClaimOrder is a work packages file's packages in claim order, checked
// once and kept in the clone's cache, each decoded only when asked for: a
// claim reads the packages it passes over, not the whole file, so that it
// costs about the same with 10 or 10,000 packages.
//
// The cache file is
//
//	magic "lgco", version, key, stamp key, count, offset*, package*, checksum
//
// with one 4-byte little-endian offset per package (where its entry starts
// among the packages), the packages encoded as the work packages cache
// encodes them (see encodePackages), and the same CRC-32C checksum. The
// key covers the file's bytes and the checks the caller ran on them: a
// file changed, or a policy that judges its keys otherwise, makes a new
// one. The stamp key covers the file's stamp instead of its bytes (its
// size, times and inode, once it has not changed for a while; see
// fileStamp), so that a claim need not read and hash 10,000 packages'
// worth of YAML to know the order is the file's, as git trusts its
// index for a file whose stat data did not change.
type ClaimOrder struct {
	// Path is the work packages file.
	Path string
	// Key names the file's bytes and the checks they passed; what is kept
	// of positions in this order names it, to be told apart from another
	// order's.
	Key  string
	offs []byte // 4 bytes a package
	body string // the packages' entries
}

const (
	claimOrderMagic   = "lgco"
	claimOrderVersion = 1
)

// clock is the time a file's stamp is judged at (tests move it on).
var clock = time.Now

// Len is the number of packages.
func (c *ClaimOrder) Len() int { return len(c.offs) / 4 }

// At decodes the i-th package in claim order.
func (c *ClaimOrder) At(i int) (*WorkPackage, error) {
	if i < 0 || i >= c.Len() {
		return nil, fmt.Errorf("claim order of %s: no package %d of %d", c.Path, i, c.Len())
	}
	off := binary.LittleEndian.Uint32(c.offs[4*i:])
	if uint64(off) > uint64(len(c.body)) {
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

// LoadClaimOrderCached returns the packages of the work packages file at
// path in claim order. checks names what the caller checks a file's
// packages against (its policy); load, called when the cache in cacheDir
// holds no order for these bytes and these checks, reads and checks the
// file. A file that does not load is never cached.
func LoadClaimOrderCached(path, cacheDir, checks string, load func() (*WorkPackages, error)) (*ClaimOrder, error) {
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
			_ = writeCacheFile(cacheDir, file, encodeClaimOrder(key, stampKey, c.packages()))
		}
		return c, nil
	}
	wps, err := load()
	if err != nil {
		return nil, err
	}
	b := encodeClaimOrder(key, stampKey, wps.ClaimOrder())
	c, decoded := decodeClaimOrder(b, key, "")
	if !decoded {
		return nil, errors.New("claim order: the encoding does not read back")
	}
	c.Path = path
	if ok {
		if err := writeCacheFile(cacheDir, file, b); err != nil {
			return nil, fmt.Errorf("claim order cache: %w", err)
		}
	}
	return c, nil
}

// packages decodes every package, for writing the order again.
func (c *ClaimOrder) packages() []*WorkPackage {
	ps := make([]*WorkPackage, 0, c.Len())
	for i := range c.Len() {
		if p, err := c.At(i); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

func encodeClaimOrder(key, stampKey string, ps []*WorkPackage) []byte {
	var body []byte
	offs := make([]byte, 0, 4*len(ps))
	for _, p := range ps {
		offs = binary.LittleEndian.AppendUint32(offs, uint32(len(body)))
		body = appendPackage(body, p)
	}
	b := make([]byte, 0, len(claimOrderMagic)+len(key)+len(offs)+len(body)+24)
	b = append(b, claimOrderMagic...)
	b = binary.AppendUvarint(b, claimOrderVersion)
	b = appendString(b, key)
	b = appendString(b, stampKey)
	b = binary.AppendUvarint(b, uint64(len(ps)))
	b = append(b, offs...)
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// decodeClaimOrder reads a file encodeClaimOrder wrote under key, or
// with key "" under stampKey (not ""); ok is false for any other bytes.
// The entries are checked by their checksum here and decoded by At.
func decodeClaimOrder(data []byte, key, stampKey string) (*ClaimOrder, bool) {
	const sumLen = 4
	if len(data) < len(claimOrderMagic)+sumLen || !bytes.HasPrefix(data, []byte(claimOrderMagic)) {
		return nil, false
	}
	body := data[:len(data)-sumLen]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, false
	}
	r := packageReader{s: string(body[len(claimOrderMagic):])}
	if r.readUvarint() != claimOrderVersion {
		return nil, false
	}
	k, sk := r.readString(), r.readString()
	if key != "" && k != key || key == "" && (stampKey == "" || sk != stampKey) {
		return nil, false
	}
	n := r.readUvarint()
	if r.bad || n > MaxWorkPackages || 4*n > uint64(len(r.s)) {
		return nil, false
	}
	return &ClaimOrder{Key: k, offs: []byte(r.s[:4*n]), body: r.s[4*n:]}, true
}
