package gitstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// snapshotFile is the cached state of the ref in the clone: the records of
// one commit and when the remote last named that commit. It only saves
// reading objects; a stale or damaged file is never trusted beyond that:
// reads still ask the remote unless Options.MaxAge allows its age.
type snapshotFile struct {
	Commit    string            `json:"commit"`
	Fence     uint64            `json:"fence"`
	Trees     map[string]string `json:"trees,omitempty"`
	Confirmed time.Time         `json:"confirmed"`
	Records   []cachedBlob      `json:"records"`
}

type cachedBlob struct {
	Name string `json:"name"`
	OID  string `json:"oid"`
	Data []byte `json:"data"`
}

// cacheID names the cache of one remote's ref.
func cacheID(remote, ref string) string {
	sum := sha256.Sum256([]byte(remote + "\x00" + ref))
	return hex.EncodeToString(sum[:8])
}

// loadCache makes the cached state the snapshot, if there is one. The
// caller holds s.mu.
func (s *Store) loadCache() {
	data, err := os.ReadFile(s.cache)
	if err != nil {
		return
	}
	var f snapshotFile
	if json.Unmarshal(data, &f) != nil || f.Confirmed.After(time.Now().Add(time.Minute)) {
		return
	}
	t := emptyTable()
	t.commit, t.fence = f.Commit, f.Fence
	for d, oid := range f.Trees {
		t.trees[d] = oid
	}
	for _, b := range f.Records {
		if !validName(b.Name) {
			return
		}
		t.recs[b.Name] = decodeRecord(b.Name, b.OID, b.Data)
		t.fence = max(t.fence, t.recs[b.Name].lock.Fence)
	}
	s.snap, s.confirmed = t, f.Confirmed
	for _, r := range t.recs {
		s.byOID[r.oid] = r
	}
}

// saveCache writes the snapshot, best effort: through a temporary file
// renamed into place, so a reader sees a whole file or the one before.
// The caller holds s.mu.
func (s *Store) saveCache() {
	if s.snap == nil {
		return
	}
	f := snapshotFile{Commit: s.snap.commit, Fence: s.snap.fence, Trees: s.snap.trees, Confirmed: s.confirmed}
	for _, r := range s.snap.recs {
		f.Records = append(f.Records, cachedBlob{Name: r.name, OID: r.oid, Data: r.data})
	}
	data, err := json.Marshal(f)
	if err != nil {
		return
	}
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
