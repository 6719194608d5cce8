package gitstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// The snapshot file is the cached state of the ref in the clone: the
// records of one commit and when the remote last named that commit. It
// saves reading objects, and lets a hook under locks.git.max_age answer
// without the remote. Records are decoded only when looked at, so loading
// it costs little more than reading it. A damaged file is not used.
//
//	magic "lgsnap", version, commit, fence, format, table, generation,
//	confirmed (unix ns), trees count, (dir, oid)*, records count,
//	(name, oid, data)*
//
// Strings are a uvarint length and bytes; numbers uvarints. Version 1,
// written by releases before the stamp, has no format, table and
// generation: its state is of the chained format. Its file is read, so
// that the state the clone saw last still guards against a rewind.
const (
	snapMagic   = "lgsnap"
	snapVersion = 2
	// maxSnapshot bounds the file read: far above 100,000 locks.
	maxSnapshot = 256 << 20
)

var errSnapshot = errors.New("not a valid snapshot")

// cacheID names the cache of one remote's ref.
func cacheID(remote, ref string) string {
	sum := sha256.Sum256([]byte(remote + "\x00" + ref))
	return hex.EncodeToString(sum[:8])
}

func encodeSnapshot(t *table, confirmed time.Time) []byte {
	str := func(b []byte, s string) []byte {
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	b := []byte(snapMagic)
	b = binary.AppendUvarint(b, snapVersion)
	b = str(b, t.commit)
	b = binary.AppendUvarint(b, t.fence)
	b = binary.AppendUvarint(b, uint64(t.stamp.Format))
	b = str(b, t.stamp.Table)
	b = binary.AppendUvarint(b, t.stamp.Generation)
	b = binary.AppendUvarint(b, uint64(confirmed.UnixNano()))
	dirs := make([]string, 0, len(t.trees))
	for d := range t.trees {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	b = binary.AppendUvarint(b, uint64(len(dirs)))
	for _, d := range dirs {
		b = str(str(b, d), t.trees[d])
	}
	b = binary.AppendUvarint(b, uint64(len(t.recs)))
	for _, r := range t.recs {
		b = str(str(b, r.name), r.oid)
		b = binary.AppendUvarint(b, uint64(len(r.data)))
		b = append(b, r.data...)
	}
	return b
}

func decodeSnapshot(data []byte) (*table, time.Time, error) {
	if !bytes.HasPrefix(data, []byte(snapMagic)) {
		return nil, time.Time{}, errSnapshot
	}
	d := data[len(snapMagic):]
	bad := false
	num := func() uint64 {
		v, n := binary.Uvarint(d)
		if n <= 0 {
			bad, d = true, nil
			return 0
		}
		d = d[n:]
		return v
	}
	bytesOf := func() []byte {
		n := num()
		if n > uint64(len(d)) {
			bad, d = true, nil
			return nil
		}
		v := d[:n:n]
		d = d[n:]
		return v
	}
	version := num()
	if version != 1 && version != snapVersion {
		return nil, time.Time{}, errSnapshot
	}
	t := emptyTable()
	t.commit = string(bytesOf())
	t.fence = num()
	t.stamp = Stamp{Format: formatChain}
	if version == snapVersion {
		t.stamp = Stamp{Format: int(min(num(), math.MaxInt32)), Table: string(bytesOf()), Generation: num()}
		if !t.stamp.valid() {
			return nil, time.Time{}, errSnapshot
		}
	}
	confirmed := time.Unix(0, int64(num()))
	for n := num(); n > 0 && !bad; n-- {
		dir := string(bytesOf())
		t.trees[dir] = string(bytesOf())
	}
	n := num()
	if n > uint64(len(d)) {
		return nil, time.Time{}, errSnapshot
	}
	for ; n > 0 && !bad; n-- {
		name, oid := string(bytesOf()), string(bytesOf())
		if !validName(name) {
			return nil, time.Time{}, errSnapshot
		}
		t.recs[name] = newRecord(name, oid, bytesOf())
	}
	if bad || len(d) != 0 {
		return nil, time.Time{}, errSnapshot
	}
	return t, confirmed, nil
}

// loadCache makes the cached state the snapshot, if there is a usable
// one. The caller holds s.mu.
func (s *Store) loadCache() {
	f, err := os.Open(s.cache)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() > maxSnapshot {
		return
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return
	}
	t, confirmed, err := decodeSnapshot(data)
	if err != nil || confirmed.After(time.Now().Add(time.Minute)) {
		return
	}
	s.snap, s.confirmed = t, confirmed
	for _, r := range t.recs {
		s.byOID[r.oid] = r
	}
}

// saveCache writes the snapshot, best effort: through a temporary file
// renamed into place, so that a reader sees a whole file or the one
// before. The caller holds s.mu.
func (s *Store) saveCache() {
	if s.snap == nil {
		return
	}
	data := encodeSnapshot(s.snap, s.confirmed)
	dir := filepath.Dir(s.cache)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".gitstore-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.cache)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}
