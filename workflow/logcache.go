package workflow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// The events cache keeps, per ref, the decoded events of the ref's
// events/ tree last read, under <common-dir>/lockgate/cache/. It is keyed
// by the tree's hash: the same tree holds the same events, so a cache
// entry is either exactly right or not used. It saves reading the blobs
// and parsing their JSON; deleting it at any time changes nothing but
// speed.
//
// The events are kept in time order, in blocks of blockEvents, each
// headed by the time of its first event, its reach: the latest time at
// which one of its events can still bear on a lock (see reach), and a
// Bloom filter of the keys and workers its events name. A reader that
// needs only the events from some time on (ReadEventsSince), or only
// those of a key or a worker (ReadEventsMatching), decodes the blocks
// that can matter and skips the rest unread; a ref that gained events
// rewrites only the blocks from the first new event on, copying the
// earlier ones as they are. Each block's events are compressed (a
// Zstandard frame): the file is a copy of the whole history, and
// uncompressed it grew by some 140 bytes an event.
//
// The blocks' heads come first, together, and their events after: a
// reader reads the heads and then only the blocks it decodes, so that
// what a read of the last hour costs does not grow with the history.
//
// File layout (integers are unsigned varints, strings a length then the
// bytes, times a string of time.Time's binary form, checksums CRC-32C
// in 4 bytes, big endian):
//
//	magic "lgevents", version, the heads' length, the heads:
//	  shape, ref, tree, count, blocks,
//	  blocks × (events, first time, reach flag [0: a time, 1:
//	            unbounded], reach time when flag is 0, filter hashes,
//	            filter bits (a string), decoded length, compressed
//	            length, checksum of the compressed events),
//	the checksum of the heads,
//	blocks × the Zstandard frame of the decoded length's bytes of
//	         events × event (see appendEvent), of the compressed length.
//
// The file ends where the last block does. The checksums catch a torn or
// damaged file, not a forged one: whoever can write the cache can move
// the refs it describes.
const (
	cacheMagic = "lgevents"
	// cacheVersion 6: the blocks' heads first, each block checked on
	// its own. Version 5 (heads between the blocks, one checksum), 4
	// (plain blocks), 3 (events carry Commit, no blocks) and earlier
	// files are rebuilt, never read with the fields shifted.
	cacheVersion = 6
	// minEncodedEvent is the fewest bytes an encoded event takes:
	// thirteen string lengths, the timestamp's length, the fence and the
	// expiry flag. It bounds the count a block can claim.
	minEncodedEvent = 16
	// blockEvents is how many events a block of the cache holds: a read
	// from some time on decodes at most this many events it does not
	// need, and a ref that gained events re-encodes at most this many
	// old ones.
	blockEvents = 256
)

// cacheFile is where the events of ref are cached.
func cacheFile(commonDir, ref string) string {
	return filepath.Join(commonDir, "lockgate", "cache", "events-"+digest16(ref)+".bin")
}

// codecFields is the shape of journal.Event that appendEvent and
// decoder.event were written for. Should Event change, the cache is not
// used (eventCacheable) until the codec follows: a field the codec does
// not know would be lost.
const codecFields = "ID string;Timestamp time.Time;Worker string;WorkerType string;Action string;" +
	"Key string;ActivityID string;TaskID string;Details string;Commit string;Session string;" +
	"RequestID string;TraceID string;Fence uint64;ExpiresAt *time.Time;Store string;"

// eventFields describes journal.Event's fields as codecFields does, and
// with their tags too when tags is set.
func eventFields(tags bool) string {
	var b strings.Builder
	t := reflect.TypeFor[journal.Event]()
	for i := range t.NumField() {
		f := t.Field(i)
		fmt.Fprintf(&b, "%s %s;", f.Name, f.Type)
		if tags {
			fmt.Fprintf(&b, "%q;", f.Tag)
		}
	}
	return b.String()
}

var eventCacheable = sync.OnceValue(func() bool { return eventFields(false) == codecFields })

// eventShape is written in every cache file: a file written while Event
// had other fields or JSON names (so its lines were read another way) is
// not used.
var eventShape = sync.OnceValue(func() string { return digest16(eventFields(true)) })

// castagnoli is the CRC-32C table of the cache files, made on first use:
// building it at start cost every lockgate process (a hook too) 0.1-0.2 ms.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// encodeCache returns the cache file of evs, the events of tree on ref,
// sorted (compareEvents).
func encodeCache(ref, tree string, evs []journal.Event) ([]byte, error) {
	return encodeSpliced(ref, tree, nil, evs)
}

// encodeSpliced returns the cache file of tree on ref whose events are
// those of the blocks keep, as they are (each with its compressed events
// read: cacheIndex.load), then tail (sorted, and all after the kept
// ones).
func encodeSpliced(ref, tree string, keep []cacheBlock, tail []journal.Event) ([]byte, error) {
	count := len(tail)
	size := 0
	for _, bl := range keep {
		if bl.raw == nil {
			return nil, fmt.Errorf("%w: a kept block's events were not read", errCache)
		}
		size += len(bl.raw)
		count += bl.n
	}
	heads := make([]byte, 0, 64+(len(keep)+len(tail)/blockEvents+1)*128)
	heads = appendString(heads, eventShape())
	heads = appendString(heads, ref)
	heads = appendString(heads, tree)
	heads = binary.AppendUvarint(heads, uint64(count))
	heads = binary.AppendUvarint(heads, uint64(len(keep)+(len(tail)+blockEvents-1)/blockEvents))
	data := make([]byte, 0, size+len(tail)*32)
	var err error
	for _, bl := range keep {
		bl.packed, bl.crc = len(bl.raw), crc32.Checksum(bl.raw, castagnoli())
		if heads, err = appendHead(heads, bl); err != nil {
			return nil, err
		}
		data = append(data, bl.raw...)
	}
	var raw []byte
	for len(tail) > 0 {
		chunk := tail[:min(blockEvents, len(tail))]
		tail = tail[len(chunk):]
		bl := cacheBlock{n: len(chunk), first: chunk[0].Timestamp, filter: newBloom(chunk)}
		raw = raw[:0]
		for i := range chunk {
			if raw, err = appendEvent(raw, &chunk[i]); err != nil {
				return nil, err
			}
			bl.widen(&chunk[i])
		}
		bl.size = len(raw)
		zw, err := blockEncoder()
		if err != nil {
			return nil, err
		}
		at := len(data)
		data = zw.EncodeAll(raw, data)
		bl.packed, bl.crc = len(data)-at, crc32.Checksum(data[at:], castagnoli())
		if heads, err = appendHead(heads, bl); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, len(cacheMagic)+24+len(heads)+len(data))
	b = append(b, cacheMagic...)
	b = binary.AppendUvarint(b, cacheVersion)
	b = appendString(b, string(heads))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(heads, castagnoli()))
	return append(b, data...), nil
}

// cacheBlock is one block of a cache file: its events still encoded.
type cacheBlock struct {
	n         int       // events
	first     time.Time // the first event's timestamp
	reach     time.Time // the latest reach of its events (see reach)
	unbounded bool      // an event of it may bear on a lock at any later time
	filter    bloom     // the keys and workers its events name
	size      int       // the length of the encoded events
	packed    int       // the length of the compressed events
	crc       uint32    // the compressed events' CRC-32C
	off       int64     // where the compressed events are in the file
	raw       []byte    // the compressed events, once read (load)
}

// widen takes ev's reach into the block's.
func (bl *cacheBlock) widen(ev *journal.Event) {
	r, ok := reach(ev)
	switch {
	case !ok:
		bl.unbounded = true
	case r.After(bl.reach):
		bl.reach = r
	}
}

// reaches reports whether an event of the block may bear on the locks
// held at t or later.
func (bl *cacheBlock) reaches(t time.Time) bool {
	return bl.unbounded || !bl.reach.Before(t)
}

// appendHead encodes a block's head.
func appendHead(b []byte, bl cacheBlock) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(bl.n))
	b, err := appendTime(b, bl.first)
	if err != nil {
		return nil, err
	}
	if bl.unbounded {
		b = append(b, 1)
	} else {
		b = append(b, 0)
		if b, err = appendTime(b, bl.reach); err != nil {
			return nil, err
		}
	}
	b = append(b, bl.filter.hashes)
	b = appendString(b, bl.filter.bits)
	b = binary.AppendUvarint(b, uint64(bl.size))
	b = binary.AppendUvarint(b, uint64(bl.packed))
	return binary.BigEndian.AppendUint32(b, bl.crc), nil
}

// endsGrant are the lock actions that end a grant: they bear on no
// lock after their own time.
var endsGrant = map[string]bool{journal.ActionRelease: true, journal.ActionClear: true}

// reach is the latest time at which ev can bear on whether a lock was
// held: its own time for an event about no lock, or one that ends a
// grant; the expiry it names for one that takes or renews a grant. ok
// is false when there is no such time: a lock event without an expiry
// (an earlier version's) or of an action this version does not know,
// which holds its key until a later event ends it.
func reach(ev *journal.Event) (t time.Time, ok bool) {
	switch {
	case ev.Key == "" || endsGrant[ev.Action] || journal.HoldsNoGrant(ev.Action):
		return ev.Timestamp, true
	case ev.ExpiresAt != nil:
		if ev.ExpiresAt.Before(ev.Timestamp) {
			return ev.Timestamp, true
		}
		return *ev.ExpiresAt, true
	}
	return time.Time{}, false
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) ([]byte, error) {
	tb, err := t.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return appendString(b, string(tb)), nil
}

// appendEvent encodes ev's fields in codecFields order.
func appendEvent(b []byte, ev *journal.Event) ([]byte, error) {
	b = appendString(b, ev.ID)
	b, err := appendTime(b, ev.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.ID, err)
	}
	for _, s := range [...]string{ev.Worker, ev.WorkerType, ev.Action, ev.Key, ev.ActivityID,
		ev.TaskID, ev.Details, ev.Commit, ev.Session, ev.RequestID, ev.TraceID} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, ev.Fence)
	if ev.ExpiresAt == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		if b, err = appendTime(b, *ev.ExpiresAt); err != nil {
			return nil, fmt.Errorf("event %s: %w", ev.ID, err)
		}
	}
	return appendString(b, ev.Store), nil
}

var errCache = errors.New("not a valid events cache")

// cacheIndex is a cache file with its blocks listed, not decoded; the
// blocks' compressed events are read from src when they are decoded.
type cacheIndex struct {
	ref, tree string
	count     int
	blocks    []cacheBlock
	src       io.ReaderAt
	closer    io.Closer // the file src reads, closed by close
}

// close closes the file the blocks are read from.
func (c *cacheIndex) close() {
	if c.closer != nil {
		_ = c.closer.Close()
	}
}

// maxInflate bounds how many times its compressed length a block's
// events may claim: events, each with an id of its own, compress far
// less (some 4 to 1).
const maxInflate = 1 << 10

// maxHeads bounds the heads' length: some 250 bytes a block of 256
// events, for ten million events.
const maxHeads = 64 << 20

// parseCacheAt checks the heads of the cache file src, size bytes long,
// and lists its blocks, their events unread: a block is checked when it
// is read.
func parseCacheAt(src io.ReaderAt, size int64) (*cacheIndex, error) {
	head := make([]byte, min(size, 64<<10))
	if _, err := src.ReadAt(head, 0); err != nil || len(head) < len(cacheMagic) || string(head[:len(cacheMagic)]) != cacheMagic {
		return nil, errCache
	}
	d := decoder{s: string(head[len(cacheMagic):])}
	if v := d.uvarint(); d.err != nil || v != cacheVersion {
		return nil, fmt.Errorf("%w: version %d", errCache, v)
	}
	n := d.uvarint()
	start := int64(len(head) - len(d.s))
	if d.err != nil || n > maxHeads || start+int64(n)+4 > size {
		return nil, fmt.Errorf("%w: the heads' length", errCache)
	}
	end := start + int64(n) + 4
	hb := head[min(int64(len(head)), start):min(int64(len(head)), end)]
	if int64(len(hb)) < end-start {
		hb = make([]byte, end-start)
		if _, err := src.ReadAt(hb, start); err != nil {
			return nil, errCache
		}
	}
	heads := hb[:n]
	if crc32.Checksum(heads, castagnoli()) != binary.BigEndian.Uint32(hb[n:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCache)
	}
	d = decoder{s: string(heads)}
	if d.string() != eventShape() {
		return nil, fmt.Errorf("%w: written for another journal.Event", errCache)
	}
	c := &cacheIndex{ref: d.string(), tree: d.string(), src: src}
	count, nb := d.uvarint(), d.uvarint()
	// A block's head takes more than 16 bytes: the count bounds the
	// list made for the blocks.
	if d.err != nil || nb > count || nb > uint64(len(d.s))/16 {
		return nil, errCache
	}
	c.blocks = make([]cacheBlock, 0, nb)
	sum := uint64(0)
	off := end
	for range nb {
		var bl cacheBlock
		k := d.uvarint()
		bl.first = d.time()
		switch d.byte1() {
		case 0:
			bl.reach = d.time()
		case 1:
			bl.unbounded = true
		default:
			d.fail()
		}
		bl.filter.hashes = d.byte1()
		bl.filter.bits = d.string()
		dsize, packed := d.uvarint(), d.uvarint()
		bl.crc = d.fixed32()
		if d.err != nil || k == 0 || k > blockEvents || dsize/minEncodedEvent < k || dsize > maxBlockBytes ||
			packed == 0 || packed > uint64(size-off) || dsize/maxInflate > packed ||
			bl.filter.hashes == 0 || bl.filter.hashes > maxBloomHashes || bl.filter.bits == "" {
			return nil, fmt.Errorf("%w: a block's head", errCache)
		}
		bl.n, bl.size, bl.packed, bl.off = int(k), int(dsize), int(packed), off
		off += int64(packed)
		sum += k
		if len(c.blocks) > 0 && bl.first.Before(c.blocks[len(c.blocks)-1].first) {
			return nil, fmt.Errorf("%w: blocks out of order", errCache)
		}
		c.blocks = append(c.blocks, bl)
	}
	if sum != count {
		return nil, fmt.Errorf("%w: blocks of %d events, %d in all", errCache, sum, count)
	}
	if len(d.s) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last head", errCache, len(d.s))
	}
	if off != size {
		return nil, fmt.Errorf("%w: the blocks end at %d, the file at %d", errCache, off, size)
	}
	c.count = int(count)
	return c, nil
}

// packedEvents returns block i's compressed events, read into buf's
// storage unless they were read before, and checked.
func (c *cacheIndex) packedEvents(i int, buf []byte) ([]byte, error) {
	bl := &c.blocks[i]
	if bl.raw != nil {
		return bl.raw, nil
	}
	buf = slices.Grow(buf[:0], bl.packed)[:bl.packed]
	if _, err := c.src.ReadAt(buf, bl.off); err != nil {
		return nil, fmt.Errorf("%w: reading a block: %v", errCache, err)
	}
	if crc32.Checksum(buf, castagnoli()) != bl.crc {
		return nil, fmt.Errorf("%w: a block's checksum mismatch", errCache)
	}
	return buf, nil
}

// load reads and checks the compressed events of the first n blocks and
// keeps them, for a file that copies them (encodeSpliced).
func (c *cacheIndex) load(n int) error {
	for i := range n {
		raw, err := c.packedEvents(i, nil)
		if err != nil {
			return err
		}
		c.blocks[i].raw = raw
	}
	return nil
}

// decode returns the events of blocks[from:to] whose filter says they
// may hold an event of m, each block checked against its head, and how
// many blocks it decoded. The events are all those of the blocks
// decoded, m's or not.
func (c *cacheIndex) decode(from, to int, m Match) ([]journal.Event, int, error) {
	var evs []journal.Event
	if m.any() {
		evs = make([]journal.Event, 0, c.events(from, to))
	}
	var buf, pbuf []byte
	decoded := 0
	for b := from; b < to; b++ {
		bl := c.blocks[b]
		if !m.mayHold(bl.filter) {
			continue
		}
		decoded++
		packed, err := c.packedEvents(b, pbuf)
		if err != nil {
			return nil, decoded, err
		}
		if bl.raw == nil {
			pbuf = packed
		}
		if buf, err = inflate(bl, packed, buf); err != nil {
			return nil, decoded, err
		}
		d := decoder{s: string(buf)}
		i := len(evs)
		evs = slices.Grow(evs, bl.n)[:i+bl.n]
		check := cacheBlock{first: bl.first}
		// The names last found in the filter: a worker's events, a take
		// and its release, come in runs.
		var key, worker string
		for k := range bl.n {
			ev := &evs[i+k]
			d.event(ev)
			if d.err != nil {
				return nil, decoded, d.err
			}
			check.widen(ev)
			// The filter must hold what the events name: a reader that
			// skips the block trusts it.
			if ev.Key != key && ev.Key != "" {
				if !bl.filter.has(keyName, ev.Key) {
					return nil, decoded, fmt.Errorf("%w: a block's filter lacks a key of its events", errCache)
				}
				key = ev.Key
			}
			if ev.Worker != worker && ev.Worker != "" {
				if !bl.filter.has(workerName, ev.Worker) {
					return nil, decoded, fmt.Errorf("%w: a block's filter lacks a worker of its events", errCache)
				}
				worker = ev.Worker
			}
		}
		if len(d.s) != 0 {
			return nil, decoded, fmt.Errorf("%w: %d bytes after a block's events", errCache, len(d.s))
		}
		// The head must say what the events say: a reader that skips the
		// block trusts it.
		if !evs[i].Timestamp.Equal(bl.first) || check.unbounded && !bl.unbounded || !bl.reaches(check.reach) {
			return nil, decoded, fmt.Errorf("%w: a block's head does not match its events", errCache)
		}
		if i > 0 && compareEvents(evs[i-1], evs[i]) >= 0 {
			return nil, decoded, fmt.Errorf("%w: events out of order", errCache)
		}
	}
	return evs, decoded, nil
}

// blockEncoder and blockDecoder compress and decompress the events of
// a block, made on first use (a hook that reads no cache pays nothing)
// and shared: their EncodeAll and DecodeAll may run at once. Zstandard
// at its fastest level: it decompresses several times faster than
// DEFLATE, which a read pays for every block it decodes, and compresses
// the events smaller. One segment: the frame's header then always gives
// the size of its content, which inflate checks before decoding.
var (
	blockEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
	})
	blockDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlockBytes))
	})
)

// maxBlockBytes bounds a block's decoded events: as many as it may hold,
// each of the most a journal line may take.
const maxBlockBytes = blockEvents * (journal.MaxLineBytes + 1)

// inflate returns the events of bl, packed, decompressed, in buf's
// storage: exactly the length its head gives, which the frame's header
// must give too, so that a damaged head costs no more memory than its
// frame.
func inflate(bl cacheBlock, packed, buf []byte) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(packed); err != nil || !h.HasFCS || h.FrameContentSize != uint64(bl.size) || h.Skippable {
		return nil, fmt.Errorf("%w: a block's compressed events do not say the %d bytes its head gives", errCache, bl.size)
	}
	zr, err := blockDecoder()
	if err != nil {
		return nil, err
	}
	out, err := zr.DecodeAll(packed, buf[:0])
	if err != nil || len(out) != bl.size {
		return nil, fmt.Errorf("%w: a block's events are not the %d bytes its head gives", errCache, bl.size)
	}
	return out, nil
}

// start is the first block a read of the events from since on needs:
// the one with the last event before since (so that the read shows where
// the log begins), or, with reach, an earlier one whose events may bear
// on the locks held at since. With since zero, the first.
func (c *cacheIndex) start(since time.Time, reach bool) int {
	if since.IsZero() {
		return 0
	}
	last := 0
	for i := len(c.blocks) - 1; i > 0; i-- {
		if c.blocks[i].first.Before(since) {
			last = i
			break
		}
	}
	for i := range last {
		if reach && c.blocks[i].reaches(since) {
			return i
		}
	}
	return last
}

// end is one past the last block a read of the events before until
// needs: the blocks that begin at or after until are not (all of the
// blocks with until zero).
func (c *cacheIndex) end(until time.Time) int {
	if until.IsZero() {
		return len(c.blocks)
	}
	n := len(c.blocks)
	for n > 0 && !c.blocks[n-1].first.Before(until) {
		n--
	}
	return n
}

// before is how many leading blocks hold only events that sort before
// an event at t: a block is, when the next one begins before t.
func (c *cacheIndex) before(t time.Time) int {
	k := 0
	for k+1 < len(c.blocks) && c.blocks[k+1].first.Before(t) {
		k++
	}
	return k
}

// events counts the events of blocks[from:to].
func (c *cacheIndex) events(from, to int) int {
	n := 0
	for _, bl := range c.blocks[from:to] {
		n += bl.n
	}
	return n
}

// decoder reads from s, once converted from the file's bytes, so that
// the decoded strings are slices of it rather than one allocation each.
type decoder struct {
	s   string
	err error
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		if len(d.s) == 0 {
			break
		}
		c := d.s[0]
		d.s = d.s[1:]
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	d.fail()
	return 0
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.s)) {
		d.fail()
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

func (d *decoder) time() time.Time {
	var t time.Time
	s := d.string()
	// UnmarshalBinary takes any nanoseconds (version, 8 bytes of
	// seconds, then 4 of nanoseconds), even negative ones, which make
	// a Time no encoding gives.
	if d.err == nil && (len(s) < 13 || binary.BigEndian.Uint32([]byte(s[9:13])) > 999_999_999 || t.UnmarshalBinary([]byte(s)) != nil) {
		d.fail()
	}
	return t
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated or malformed", errCache)
	}
	d.s = ""
}

func (d *decoder) event(ev *journal.Event) {
	ev.ID = d.string()
	ev.Timestamp = d.time()
	for _, p := range [...]*string{&ev.Worker, &ev.WorkerType, &ev.Action, &ev.Key, &ev.ActivityID,
		&ev.TaskID, &ev.Details, &ev.Commit, &ev.Session, &ev.RequestID, &ev.TraceID} {
		*p = d.string()
	}
	ev.Fence = d.uvarint()
	switch flag := d.byte1(); flag {
	case 0:
	case 1:
		t := d.time()
		ev.ExpiresAt = &t
	default:
		d.fail()
	}
	ev.Store = d.string()
}

// fixed32 reads 4 bytes, big endian.
func (d *decoder) fixed32() uint32 {
	if len(d.s) < 4 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint32([]byte(d.s[:4]))
	d.s = d.s[4:]
	return v
}

// byte1 reads one byte.
func (d *decoder) byte1() byte {
	if len(d.s) == 0 {
		d.fail()
		return 0
	}
	c := d.s[0]
	d.s = d.s[1:]
	return c
}

// readCache returns the cache of ref, listed but not decoded, or ok
// false when there is no usable cache: absent, unreadable, damaged, of
// another version or another ref. A symbolic link is not followed.
func readCache(commonDir, ref string) (c *cacheIndex, ok bool) {
	if !eventCacheable() {
		return nil, false
	}
	file := cacheFile(commonDir, ref)
	if safefs.CheckDirs(filepath.Dir(file), 2) != nil {
		return nil, false
	}
	f, err := openCache(file)
	if err != nil {
		return nil, false
	}
	fi, err := f.Stat()
	if err == nil {
		c, err = parseCacheAt(f, fi.Size())
	}
	if err != nil || c.ref != ref {
		f.Close()
		return nil, false
	}
	c.closer = f
	return c, true
}

// openCache opens a cache file to read: a regular file, not a symbolic
// link, nor a FIFO, which would block the open (hence O_NONBLOCK, which
// changes nothing for a regular file).
func openCache(name string) (*os.File, error) {
	f, err := safefs.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errCache
	}
	return f, nil
}

// readFile reads name whole, in one read when it does not change size
// meanwhile, never through a symbolic link.
func readFile(name string) ([]byte, error) {
	f, err := openCache(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}

// cachedTree returns the tree the cache of ref says it holds, reading
// only the start of the file, or "" when there is none.
func cachedTree(commonDir, ref string) string {
	file := cacheFile(commonDir, ref)
	if !eventCacheable() || safefs.CheckDirs(filepath.Dir(file), 2) != nil {
		return ""
	}
	f, err := openCache(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	var head [1024]byte
	n, _ := io.ReadFull(f, head[:])
	if n < len(cacheMagic) || string(head[:len(cacheMagic)]) != cacheMagic {
		return ""
	}
	d := decoder{s: string(head[len(cacheMagic):n])}
	if d.uvarint() != cacheVersion || d.uvarint() == 0 || d.string() != eventShape() || d.string() != ref {
		return ""
	}
	if tree := d.string(); d.err == nil {
		return tree
	}
	return ""
}

// writeCache stores evs as the events of tree on ref, best effort: a
// cache that cannot be written (a read-only repository, a directory that
// is a symbolic link or another user's) is not an error, only slower.
func writeCache(commonDir, ref, tree string, evs []journal.Event) {
	if !eventCacheable() {
		return
	}
	data, err := encodeCache(ref, tree, evs)
	if err != nil {
		return
	}
	writeCacheData(commonDir, ref, data)
}

// writeCacheData puts a cache file of ref in place, best effort.
func writeCacheData(commonDir, ref string, data []byte) {
	file := cacheFile(commonDir, ref)
	dir := filepath.Dir(file)
	if safefs.MkdirAll(dir, 0o777, 2) != nil {
		return
	}
	// A fresh name (O_EXCL) renamed into place: a link at file is
	// replaced, never written through, and a reader sees the old file or
	// the new one, whole.
	tmp, err := os.CreateTemp(dir, ".events-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}
