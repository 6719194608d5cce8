package redisstore

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

// checkJSON fails t unless appendLockJSON makes json.Marshal's bytes (and
// fails where it fails).
func checkJSON(t *testing.T, rec locks.Lock) {
	t.Helper()
	want, werr := json.Marshal(rec)
	got, gerr := appendLockJSON([]byte("prefix"), &rec)
	switch {
	case werr != nil && gerr == nil:
		t.Fatalf("json.Marshal: %v; appendLockJSON succeeded with %s", werr, got)
	case werr == nil && gerr != nil:
		t.Fatalf("appendLockJSON: %v; json.Marshal made %s", gerr, want)
	case werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)):
		t.Fatalf("appendLockJSON:\n%s\njson.Marshal:\nprefix%s", got, want)
	}
}

func TestAppendLockJSON(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	full := locktest.NewLock("activity:WI-1", "alice", now, time.Hour)
	acq, exp := now, now.Add(30*time.Minute).In(time.FixedZone("X", 5*3600+1800))
	full.TaskID, full.TaskAcquired, full.TaskExpires = "T-1", &acq, &exp
	full.RequestID, full.TraceID, full.Fence = "req", "trace", 42
	cases := []struct {
		name string
		rec  locks.Lock
	}{
		{"minimal", locks.Lock{Key: "a.py", ExpiresAt: now}},
		{"typical", locktest.NewLock("src/bench/client-000.go", "bench", now, time.Minute)},
		{"every field", full},
		{"escapes", locks.Lock{Key: "x\"\\/<>&\b\f\n\r\t\x00\x1f\x7f", Holder: "\u2028\u2029é日本", Reason: "bad \xff\xfe utf-8 \xe2\x80", ExpiresAt: now}},
		{"awkward keys", locks.Lock{Key: strings.Join(locktest.AwkwardKeys(), "|"), ExpiresAt: now}},
		{"negative pid, zone", locks.Lock{Key: "k", PID: -7, CreatedAt: now.In(time.FixedZone("Y", -3600)), ExpiresAt: now.Add(time.Nanosecond)}},
		{"year out of range", locks.Lock{Key: "k", ExpiresAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"task time out of range", locks.Lock{Key: "k", ExpiresAt: now, TaskExpires: new(time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkJSON(t, c.rec)
		})
	}
}

func FuzzAppendLockJSON(f *testing.F) {
	f.Add("src/a.py", "alice", "sess", "lock", "why <b>&", "T-1", "tok", "req", "trace", int64(1767225600123), int64(-3600), 42)
	f.Add("\xff\u2028\"\\", "", "", "", "\x00\n", "", "", "", "", int64(0), int64(0), 0)
	f.Fuzz(func(t *testing.T, key, holder, session, action, reason, task, token, req, trace string, ms, zone int64, pid int) {
		at := time.UnixMilli(ms).In(time.FixedZone("Z", int(zone%(48*3600))))
		rec := locks.Lock{Key: key, Holder: holder, HolderType: "agent", Session: session, Action: action,
			PID: pid, Host: holder + "@" + session, CreatedAt: at, ExpiresAt: at.Add(time.Duration(ms % 1e6)),
			Reason: reason, TaskID: task, Token: token, Fence: uint64(ms), RequestID: req, TraceID: trace}
		if task != "" {
			rec.TaskAcquired, rec.TaskExpires = &at, &rec.ExpiresAt
		}
		checkJSON(t, rec)
	})
}

// encodeValue's layout, checked against its definition and parseValue.
func TestEncodeValue(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	rec := locktest.NewLock("src/a.py", "alice", now, time.Hour)
	rec.Session = strings.Repeat("s", 600) // past the encoder's stack buffer
	rec.Fence = 99
	head, tail, err := encodeValue(rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.Fence = 0
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(rec.ExpiresAt.UnixMilli(), 10) + "\n"; head != want {
		t.Fatalf("head %q, want %q", head, want)
	}
	if want := "\n" + rec.Token + "\n600\n" + rec.Session + string(data); tail != want {
		t.Fatalf("tail %q, want %q", tail, want)
	}
	got, err := parseValue(rec.Key, head+"7"+tail)
	if err != nil {
		t.Fatal(err)
	}
	rec.Fence = 7
	if d := locktest.DiffLock(rec, got); d != "" {
		t.Fatal(d)
	}
}

func BenchmarkEncodeValue(b *testing.B) {
	rec := locktest.NewLock("src/bench/client-000.go", "bench", time.Now(), time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := encodeValue(rec); err != nil {
			b.Fatal(err)
		}
	}
}
