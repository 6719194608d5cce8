package workflow

import (
	"github.com/lockgate/lockgate/model/locks/journal"
)

// bloom is the Bloom filter of a block of the events cache: the keys and
// workers its events name. A read of one key's or one worker's events
// decodes only the blocks whose filter may hold it; a false positive
// costs a decode, never an answer, since the decoded events are matched
// one by one.
type bloom struct {
	hashes byte   // bits set per name
	bits   string // the filter, 8 bits a byte, least significant first
}

const (
	// bloomHashes and bloomBitsPerName give about 1% false positives.
	bloomHashes      = 7
	bloomBitsPerName = 10
	// maxBloomHashes bounds what a file may claim: a read tests as many
	// bits per name.
	maxBloomHashes = 16
)

// Names are filtered under a prefix of their field: a worker named as a
// key does not make the block hold that key.
const (
	keyName    = 'k'
	workerName = 'w'
)

// newBloom is the filter of evs' keys and workers.
func newBloom(evs []journal.Event) bloom {
	type name struct {
		field byte
		s     string
	}
	names := map[name]bool{}
	for i := range evs {
		if evs[i].Key != "" {
			names[name{keyName, evs[i].Key}] = true
		}
		if evs[i].Worker != "" {
			names[name{workerName, evs[i].Worker}] = true
		}
	}
	bits := make([]byte, max(8, (len(names)*bloomBitsPerName+7)/8))
	f := bloom{hashes: bloomHashes}
	for n := range names {
		f.positions(n.field, n.s, len(bits)*8, func(i uint64) bool {
			bits[i/8] |= 1 << (i % 8)
			return true
		})
	}
	f.bits = string(bits)
	return f
}

// FNV-1a, 64 bits: a hash that is the same in every process, as the
// file outlives them.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// positions calls fn with the bits of name of field in a filter of m
// bits, while fn returns true, and reports whether it always did. The
// bits are h1 + i·h2 of the FNV-1a hash of field then name split in two
// (Kirsch and Mitzenmacher). The hash is computed here rather than with
// hash/fnv: a decoded block checks every event's names, and the
// interface and the bytes of the name cost an allocation each.
func (f bloom) positions(field byte, name string, m int, fn func(uint64) bool) bool {
	sum := uint64(fnvOffset)
	sum = (sum ^ uint64(field)) * fnvPrime
	for i := range len(name) {
		sum = (sum ^ uint64(name[i])) * fnvPrime
	}
	h1, h2 := sum&0xffffffff, sum>>32|1
	for i := range uint64(f.hashes) {
		if !fn((h1 + i*h2) % uint64(m)) {
			return false
		}
	}
	return true
}

// has reports whether the filter may hold name; false is certain. The
// filter has bits (parseCache refuses one without).
func (f bloom) has(field byte, name string) bool {
	return f.positions(field, name, len(f.bits)*8, func(i uint64) bool {
		return f.bits[i/8]&(1<<(i%8)) != 0
	})
}

// Match narrows a read to the events of one key, or one worker, or one
// key and one worker ("" any).
type Match struct {
	Key, Worker string
}

// any reports whether m keeps every event.
func (m Match) any() bool { return m.Key == "" && m.Worker == "" }

// keeps reports whether ev is one of m's events.
func (m Match) keeps(ev *journal.Event) bool {
	return (m.Key == "" || ev.Key == m.Key) && (m.Worker == "" || ev.Worker == m.Worker)
}

// mayHold reports whether the block filtered by f may hold an event m
// keeps.
func (m Match) mayHold(f bloom) bool {
	return (m.Key == "" || f.has(keyName, m.Key)) && (m.Worker == "" || f.has(workerName, m.Worker))
}
