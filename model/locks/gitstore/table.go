package gitstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/record"
	"github.com/lockgate/lockgate/model/pathmatch"
)

// fenceName is the blob that keeps the last fence handed out. Record names
// end in ".lock", so no record can take it.
const fenceName = "fence"

// treeRecord is one entry of the lock tree. Its blob is decoded when first
// looked at: a hook asks about a few paths among thousands of locks.
type treeRecord struct {
	name string // path in the tree
	oid  string // blob, "" for a record written in this change
	data []byte

	// misplaced: the name is another spelling of the name of key's
	// record (record.Misplaced).
	misplaced bool
	key       string

	once sync.Once
	l    locks.Lock // the record; only Key (if known) when e is set
	e    error      // a *locks.CorruptError
}

// table is the lock tree of one commit of the ref.
type table struct {
	commit string // "" when the ref does not exist
	stamp  Stamp  // its place among the table's states
	fence  uint64
	recs   map[string]*treeRecord // by name
	trees  map[string]string      // subtree object names, by directory

	strayOnce sync.Once
	strays    map[string][]*treeRecord // misplaced records, by their key's name
}

// misplaced returns the records at another spelling of name (a key's
// record.Name): another directory or other letter case, or the name an
// earlier version gave the record of a spelling of the key
// (record.LegacyName: those folded A-Z only). Every reader of that key
// sees them; they are never free. A legacy record is valid, its key's
// own; any other is corrupt (see get).
func (t *table) misplaced(name string) []*treeRecord {
	t.strayOnce.Do(func() {
		for _, r := range t.recs {
			own, ok := r.stray()
			if !ok {
				continue
			}
			if t.strays == nil {
				t.strays = map[string][]*treeRecord{}
			}
			t.strays[own] = append(t.strays[own], r)
		}
		for _, rs := range t.strays {
			slices.SortFunc(rs, func(a, b *treeRecord) int { return strings.Compare(a.name, b.name) })
		}
	})
	return t.strays[name]
}

func emptyTable() *table { return &table{recs: map[string]*treeRecord{}, trees: map[string]string{}} }

// newRecord is the record of a blob found at name.
func newRecord(name, oid string, data []byte) *treeRecord {
	r := &treeRecord{name: name, oid: oid, data: data}
	r.key, r.misplaced = record.Misplaced(name)
	return r
}

// stray returns the name of the key's record that r is a misplaced
// record of. A hashed name says no key: such a record is decoded, and is
// a stray when it is valid at another name than its key's (a legacy
// name); hashed names are only those of very long keys.
func (r *treeRecord) stray() (string, bool) {
	if r.misplaced {
		return nameOf(r.key), true
	}
	if !record.IsHashedName(r.name) || dirOf(r.name) == record.KeyDir {
		return "", false
	}
	l, err := r.get()
	if err != nil || nameOf(l.Key) == r.name {
		return "", false
	}
	return nameOf(l.Key), true
}

// written is the record of rec, encoded as data, made by this process.
func written(name, oid string, data []byte, rec locks.Lock) *treeRecord {
	r := &treeRecord{name: name, oid: oid, data: data}
	r.once.Do(func() { r.l = rec })
	return r
}

// get returns the record, or its *locks.CorruptError with the lock's Key
// when the name tells it. A record not at its key's name, nor at the name
// an earlier version gave it (record.LegacyName), is corrupt.
func (r *treeRecord) get() (locks.Lock, error) {
	r.once.Do(func() {
		lock, err := record.Parse(r.data)
		if err == nil && record.Name(lock.Key) != r.name && record.LegacyName(lock.Key) != r.name {
			err = fmt.Errorf("record for %q belongs at %s", lock.Key, record.Name(lock.Key))
		}
		if err != nil {
			key, _ := record.KeyOfName(r.name)
			r.l, r.e = locks.Lock{Key: key}, &locks.CorruptError{Key: key, Path: r.name, Err: err}
			return
		}
		r.l = lock
	})
	return r.l, r.e
}

// parseFence reads the fence blob.
func parseFence(data []byte) (uint64, error) {
	s := strings.TrimSpace(string(data))
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("fence counter %q is not a number", s)
	}
	return n, nil
}

// view is a locks.Store over one table that buffers its changes: what one
// Transact decides. Only one goroutine uses a view.
type view struct {
	base    *table
	fence   uint64
	changed map[string]*treeRecord // name → new record; nil: removed
	order   []string               // names in the order they changed
	skew    time.Duration
	where   func(name string) string
	summary []string // what changed, for the commit message
	changes []change // the locks it ended or took over, for the message
	sealed  bool     // publish even without a change (seal)
	// name is where a key's record is written: record.Name, but for
	// tests that write as earlier versions did.
	name func(key string) string
}

var _ locks.Store = (*view)(nil)

func newView(t *table, skew time.Duration, where func(string) string) *view {
	return &view{base: t, fence: t.fence, changed: map[string]*treeRecord{}, skew: skew, where: where, name: record.Name}
}

func (v *view) get(name string) *treeRecord {
	if r, ok := v.changed[name]; ok {
		return r
	}
	return v.base.recs[name]
}

// misplaced returns the records at other spellings of name that are still
// there (see table.misplaced). This process never writes one.
func (v *view) misplaced(name string) []*treeRecord {
	var out []*treeRecord
	for _, r := range v.base.misplaced(name) {
		if c, ok := v.changed[r.name]; !ok || c != nil {
			out = append(out, r)
		}
	}
	return out
}

// strayErr is the error of the first corrupt record at another spelling
// of name, nil when there is none (see table.misplaced).
func (v *view) strayErr(name string) error {
	for _, r := range v.misplaced(name) {
		if _, err := v.read(r); err != nil {
			return err
		}
	}
	return nil
}

func (v *view) set(name string, r *treeRecord, what string) {
	if _, ok := v.changed[name]; !ok {
		v.order = append(v.order, name)
	}
	v.changed[name] = r
	v.summary = append(v.summary, what)
}

// seal makes the view a change of its own even without records changed:
// publishing it moves the ref past the state it was decided on.
func (v *view) seal() {
	v.sealed = true
	v.summary = append(v.summary, "seal the state an interrupted command left")
}

func (v *view) dirty() bool { return len(v.changed) > 0 || v.sealed }

// each calls fn for every record, changes applied, in no order.
func (v *view) each(fn func(r *treeRecord)) {
	for name, r := range v.base.recs {
		if _, ok := v.changed[name]; !ok {
			fn(r)
		}
	}
	for _, r := range v.changed {
		if r != nil {
			fn(r)
		}
	}
}

func (v *view) put(rec locks.Lock, what string) (locks.Lock, error) {
	data, err := record.Encode(rec)
	if err != nil {
		return locks.Lock{}, err
	}
	name := v.name(rec.Key)
	v.set(name, written(name, "", data, rec), what)
	return rec, nil
}

// Acquire takes key unless a live lock holds it; a lock that expired more
// than the clock skew ago is taken over.
func (v *view) Acquire(_ context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	if err := rec.Validate(); err != nil {
		return locks.Lock{}, nil, err
	}
	if rec.Token == "" {
		rec.Token = locks.NewToken()
	}
	name := v.name(rec.Key)
	if err := v.strayErr(name); err != nil {
		return locks.Lock{}, nil, err
	}
	var prev *locks.Lock
	for _, cur := range v.records(name) {
		p, err := v.read(cur)
		if err != nil {
			return locks.Lock{}, nil, err
		}
		if !p.ExpiresAt.Add(v.skew).Before(now) {
			return locks.Lock{}, nil, &locks.HeldError{Lock: p, Where: v.where(cur.name)}
		}
		if prev == nil {
			prev = &p
		}
		v.fence = max(v.fence, p.Fence)
		if cur.name != name {
			v.set(cur.name, nil, "drop expired "+p.Key) // the new record replaces it
		}
	}
	if v.fence == math.MaxUint64 {
		// The next fence would wrap to 0, below fences already handed out.
		return locks.Lock{}, nil, fmt.Errorf("%s: %w", v.where(fenceName), locks.ErrFenceExhausted)
	}
	v.fence++
	rec.Fence = v.fence
	what := "acquire " + rec.Key
	if prev != nil {
		what = "take over " + rec.Key
		v.changes = append(v.changes, change{Op: opTakeOver, Key: prev.Key, Fence: prev.Fence, Holder: prev.Holder})
	}
	stored, err := v.put(rec, what)
	return stored, prev, err
}

// records returns the records of the key whose record is name: the one at
// name, then the valid ones an earlier version left at its legacy names
// (see table.misplaced).
func (v *view) records(name string) []*treeRecord {
	var out []*treeRecord
	if r := v.get(name); r != nil {
		out = append(out, r)
	}
	for _, r := range v.misplaced(name) {
		if _, err := r.get(); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// find returns key's record and its lock, locks.ErrNotFound or its
// *locks.CorruptError: the record at key's name, else one an earlier
// version left at a legacy name (see records); with a token, the one
// holding it when there are several. Corrupt records at other spellings
// of the name are not the holder's: Release and Update leave them, Get
// and Remove see them.
func (v *view) find(key, token string) (*treeRecord, locks.Lock, error) {
	rs := v.records(v.name(key))
	if len(rs) == 0 {
		return nil, locks.Lock{}, locks.ErrNotFound
	}
	r := rs[0]
	for _, c := range rs[1:] {
		if l, _ := c.get(); token != "" && l.Token == token {
			r = c
		}
	}
	l, err := v.read(r)
	return r, l, err
}

// Release removes key's record if its token is token.
func (v *view) Release(_ context.Context, key, token string) error {
	r, l, err := v.find(key, token)
	if err != nil {
		return err
	}
	if l.Token != token {
		return locks.ErrTokenMismatch
	}
	v.set(r.name, nil, "release "+l.Key)
	v.changes = append(v.changes, change{Op: opRelease, Key: l.Key, Fence: l.Fence, Holder: l.Holder})
	return nil
}

// Update replaces key's record if the token matches, keeping its fence.
func (v *view) Update(_ context.Context, rec locks.Lock) (locks.Lock, error) {
	if err := rec.Validate(); err != nil {
		return locks.Lock{}, err
	}
	r, l, err := v.find(rec.Key, rec.Token)
	if err != nil {
		return locks.Lock{}, err
	}
	if l.Token != rec.Token {
		return locks.Lock{}, locks.ErrTokenMismatch
	}
	rec.Fence = l.Fence
	if r.name != v.name(rec.Key) {
		v.set(r.name, nil, "move "+l.Key) // from its legacy name to its own
	}
	return v.put(rec, "refresh "+rec.Key)
}

// Remove deletes key's record whoever holds it, and the records at other
// spellings of its name; when one of them was corrupt, that is reported
// as its *locks.CorruptError.
func (v *view) Remove(_ context.Context, key string) (locks.Lock, error) {
	r, l, err := v.find(key, "")
	var corrupt *locks.CorruptError
	switch {
	case errors.As(err, &corrupt):
		v.set(r.name, nil, "clear corrupt "+key)
		l = locks.Lock{Key: key}
	case errors.Is(err, locks.ErrNotFound):
	case err != nil:
		return locks.Lock{}, err
	default:
		v.set(r.name, nil, "clear "+l.Key)
		v.changes = append(v.changes, change{Op: opClear, Key: l.Key, Fence: l.Fence, Holder: l.Holder})
	}
	for _, s := range v.misplaced(v.name(key)) {
		if s == r {
			continue
		}
		sl, serr := v.read(s)
		if serr == nil {
			v.set(s.name, nil, "clear "+sl.Key) // a legacy record of the key
			continue
		}
		if corrupt == nil {
			errors.As(serr, &corrupt)
		}
		v.set(s.name, nil, "clear corrupt "+s.name)
	}
	switch {
	case corrupt != nil:
		return locks.Lock{Key: key}, corrupt
	case r == nil:
		return locks.Lock{}, locks.ErrNotFound
	}
	return l, nil
}

// Get returns key's record; a record at another spelling of its name
// makes it corrupt.
func (v *view) Get(_ context.Context, key string) (locks.Lock, error) {
	_, l, err := v.find(key, "")
	if err == nil || errors.Is(err, locks.ErrNotFound) {
		if serr := v.strayErr(v.name(key)); serr != nil {
			return locks.Lock{Key: key}, serr
		}
	}
	return l, err
}

func (v *view) entryOf(r *treeRecord) locks.Entry {
	l, err := v.read(r)
	return locks.Entry{Lock: l, Name: r.name, Err: err}
}

// read decodes r; a corrupt record's error names where it is on the
// remote, for the message and the hint to inspect it.
func (v *view) read(r *treeRecord) (locks.Lock, error) {
	l, err := r.get()
	var ce *locks.CorruptError
	if errors.As(err, &ce) {
		c := *ce
		c.Path = v.where(r.name)
		return l, &c
	}
	return l, err
}

// collect returns the entries of the records keep accepts, sorted by key.
func (v *view) collect(keep func(r *treeRecord) bool) []locks.Entry {
	var out []locks.Entry
	v.each(func(r *treeRecord) {
		if keep(r) {
			out = append(out, v.entryOf(r))
		}
	})
	slices.SortFunc(out, func(a, b locks.Entry) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Name, b.Name))
	})
	return out
}

// List returns every record, corrupt ones included.
func (v *view) List(context.Context) ([]locks.Entry, error) {
	return v.collect(func(*treeRecord) bool { return true }), nil
}

// Page returns the records whose names in the lock tree come after
// after, at most limit of them in the order of those names (see
// locks.Store): the tree's names are all at hand, and only the page's
// records are decoded.
func (v *view) Page(_ context.Context, after string, limit int) ([]locks.Entry, string, error) {
	limit = max(limit, 1)
	var recs []*treeRecord
	v.each(func(r *treeRecord) {
		if r.name > after {
			recs = append(recs, r)
		}
	})
	slices.SortFunc(recs, func(a, b *treeRecord) int { return strings.Compare(a.name, b.name) })
	next := ""
	if len(recs) > limit {
		recs, next = recs[:limit], recs[limit-1].name
	}
	out := make([]locks.Entry, len(recs))
	for i, r := range recs {
		out[i] = v.entryOf(r)
	}
	return out, next, nil
}

// Overlapping returns key's record and every record that may overlap it:
// by the key it names or, when corrupt, the key its name says (see
// record.KeyOfName). A corrupt record under a hashed name may be of any
// key that hashes there, and a pattern's of any pattern; a name that is
// no key's record in any spelling blocks nothing.
func (v *view) Overlapping(_ context.Context, key string) ([]locks.Entry, error) {
	own := nameOf(key)
	return v.collect(func(r *treeRecord) bool {
		l, err := r.get()
		if err != nil && l.Key == "" {
			return record.IsHashedName(r.name) && (r.name == own || dirOf(r.name) == "patterns" || lockkey.IsPattern(key))
		}
		return lockkey.SameFoldCase(l.Key, key) || lockkey.OverlapFoldCase(key, l.Key)
	}), nil
}

// Covering returns the records of the given paths and of the pattern locks
// matching any of them, as Overlapping judges them. Only those records,
// the patterns and misplaced records are decoded.
func (v *view) Covering(_ context.Context, paths []string) ([]locks.Entry, error) {
	var out []locks.Entry
	seen := make(map[string]bool, len(paths))
	add := func(r *treeRecord) {
		if !seen[r.name] {
			seen[r.name] = true
			out = append(out, v.entryOf(r))
		}
	}
	probed := make(map[string]bool, len(paths))
	for _, p := range paths {
		name := nameOf(lockkey.FoldPath(p))
		if probed[name] {
			continue
		}
		probed[name] = true
		if r := v.get(name); r != nil {
			add(r)
		}
		for _, s := range v.misplaced(name) {
			add(s)
		}
	}
	var pats []string
	var patRecs []*treeRecord
	v.each(func(r *treeRecord) {
		inPatterns := dirOf(r.name) == "patterns"
		if !inPatterns && !r.misplaced {
			return // a path's record at its name: probed above
		}
		l, err := r.get()
		if err != nil && l.Key == "" {
			if record.IsHashedName(r.name) && inPatterns {
				add(r) // never free: it may match
			}
			return
		}
		if !inPatterns && !lockkey.IsPattern(l.Key) {
			return // misplaced, of a path: probed above
		}
		if key, ok := lockkey.FoldedGlob(l.Key); ok {
			pats, patRecs = append(pats, key), append(patRecs, r)
		}
	})
	if len(pats) > 0 {
		m, err := pathmatch.NewMatcher(pats, false)
		if err != nil {
			return nil, fmt.Errorf("covering: pattern lock: %w", err)
		}
		for i, hit := range m.MatchedAny(lockkey.MatchForm(paths, true)) {
			if hit {
				add(patRecs[i])
			}
		}
	}
	slices.SortFunc(out, func(a, b locks.Entry) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}

// InNamespace returns every record of namespace ns, misplaced ones
// included, and corrupt ones under hashed names, which may be of any key.
func (v *view) InNamespace(_ context.Context, ns string) ([]locks.Entry, error) {
	return v.collect(func(r *treeRecord) bool {
		if dirOf(r.name) == "" && !r.misplaced {
			return false // a path record: in no namespace
		}
		l, err := r.get()
		if err != nil && l.Key == "" {
			return record.IsHashedName(r.name)
		}
		return lockkey.Namespace(l.Key) == ns
	}), nil
}

// Where names the place of key's record.
func (v *view) Where(key string) string { return v.where(nameOf(key)) }

// Close does nothing: a view holds nothing open.
func (v *view) Close() error { return nil }
