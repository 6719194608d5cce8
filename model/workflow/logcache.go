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
	"strings"
	"sync"
	"syscall"
	"time"

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
// File layout (integers are unsigned varints, strings a length then the
// bytes):
//
//	magic "lgevents", version, shape, ref, tree, count,
//	count × event (see appendEvent),
//	CRC-32C of everything before it (4 bytes, big endian)
//
// The checksum catches a torn or damaged file, not a forged one: whoever
// can write the cache can move the refs it describes.
const (
	cacheMagic = "lgevents"
	// cacheVersion 3: events carry Commit. A file of an earlier version
	// is rebuilt, never read with the fields shifted.
	cacheVersion = 3
	// minEncodedEvent is the fewest bytes an encoded event takes:
	// thirteen string lengths, the timestamp's length, the fence and the
	// expiry flag. It bounds the count a file can claim.
	minEncodedEvent = 16
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

// encodeCache returns the cache file of evs, the events of tree on ref.
func encodeCache(ref, tree string, evs []journal.Event) ([]byte, error) {
	b := make([]byte, 0, 64+len(evs)*200)
	b = append(b, cacheMagic...)
	b = binary.AppendUvarint(b, cacheVersion)
	b = appendString(b, eventShape())
	b = appendString(b, ref)
	b = appendString(b, tree)
	b = binary.AppendUvarint(b, uint64(len(evs)))
	var err error
	for i := range evs {
		if b, err = appendEvent(b, &evs[i]); err != nil {
			return nil, err
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli())), nil
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

// decodeCache reads a cache file back: the ref and tree it describes and
// their events. Strings of the events share one copy of data.
func decodeCache(data []byte) (ref, tree string, evs []journal.Event, err error) {
	if len(data) < len(cacheMagic)+4 || string(data[:len(cacheMagic)]) != cacheMagic {
		return "", "", nil, errCache
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli()) != binary.BigEndian.Uint32(data[len(body):]) {
		return "", "", nil, fmt.Errorf("%w: checksum mismatch", errCache)
	}
	d := decoder{s: string(body[len(cacheMagic):])}
	if v := d.uvarint(); v != cacheVersion {
		return "", "", nil, fmt.Errorf("%w: version %d", errCache, v)
	}
	if d.string() != eventShape() {
		return "", "", nil, fmt.Errorf("%w: written for another journal.Event", errCache)
	}
	ref, tree = d.string(), d.string()
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s))/minEncodedEvent {
		return "", "", nil, errCache
	}
	evs = make([]journal.Event, n)
	for i := range evs {
		d.event(&evs[i])
		if d.err != nil {
			return "", "", nil, d.err
		}
	}
	if len(d.s) != 0 {
		return "", "", nil, fmt.Errorf("%w: %d bytes after the last event", errCache, len(d.s))
	}
	return ref, tree, evs, nil
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

// readCache returns the cached events of ref, or ok false when there is
// no usable cache: absent, unreadable, damaged, of another version or
// another ref. A symbolic link is not followed.
func readCache(commonDir, ref string) (tree string, evs []journal.Event, ok bool) {
	if !eventCacheable() {
		return "", nil, false
	}
	file := cacheFile(commonDir, ref)
	if safefs.CheckDirs(filepath.Dir(file), 2) != nil {
		return "", nil, false
	}
	data, err := readFile(file)
	if err != nil {
		return "", nil, false
	}
	cref, tree, evs, err := decodeCache(data)
	if err != nil || cref != ref {
		return "", nil, false
	}
	return tree, evs, true
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
	if d.uvarint() != cacheVersion || d.string() != eventShape() || d.string() != ref {
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
