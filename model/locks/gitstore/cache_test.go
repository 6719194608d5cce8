package gitstore

import (
	"bytes"
	"testing"
	"time"
)

func TestSnapshotCodec(t *testing.T) {
	tb := emptyTable()
	tb.commit, tb.fence = "0123456789012345678901234567890123456789", 42
	tb.stamp = Stamp{Format: formatFlat, Table: "00112233445566778899aabbccddeeff", Generation: 7}
	tb.trees["patterns"] = "1111111111111111111111111111111111111111"
	tb.recs["a.go.lock"] = newRecord("a.go.lock", "2222222222222222222222222222222222222222", []byte(`{"key":"a.go"}`))
	tb.recs["keys/db%3Ax.lock"] = newRecord("keys/db%3Ax.lock", "3333333333333333333333333333333333333333", nil)
	at := time.Unix(1700000000, 123456789)
	data := encodeSnapshot(tb, at)
	got, conf, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if !conf.Equal(at) || got.commit != tb.commit || got.fence != 42 || got.stamp != tb.stamp || got.trees["patterns"] != tb.trees["patterns"] || len(got.recs) != 2 {
		t.Fatalf("round trip: %+v at %v", got, conf)
	}
	if r := got.recs["a.go.lock"]; r.oid != tb.recs["a.go.lock"].oid || !bytes.Equal(r.data, tb.recs["a.go.lock"].data) {
		t.Fatalf("record: %+v", r)
	}
	// Every truncation and a trailing byte are refused.
	for i := range data {
		if _, _, err := decodeSnapshot(data[:i]); err == nil {
			t.Fatalf("truncated at %d of %d: accepted", i, len(data))
		}
	}
	if _, _, err := decodeSnapshot(append(data, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	tb := emptyTable()
	tb.commit = "0123456789012345678901234567890123456789"
	tb.recs["a.go.lock"] = newRecord("a.go.lock", "2222222222222222222222222222222222222222", []byte(`{"key":"a.go","expires_at":"2026-01-01T00:00:00Z"}`))
	f.Add(encodeSnapshot(tb, time.Unix(1, 0)))
	f.Add([]byte(snapMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, conf, err := decodeSnapshot(data)
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes, and each record
		// reads as a lock or as corrupt, never a panic.
		for _, r := range got.recs {
			if _, err := r.get(); err == nil && r.l.Key == "" {
				t.Fatalf("record %s decoded without a key", r.name)
			}
		}
		again, _, err := decodeSnapshot(encodeSnapshot(got, conf))
		if err != nil || len(again.recs) != len(got.recs) || again.commit != got.commit {
			t.Fatalf("re-encoding: %v", err)
		}
	})
}
