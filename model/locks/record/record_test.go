package record

import (
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// A record is one JSON object and a newline, and reads back as it was
// written; anything short of a whole record naming a key and an expiry is
// an error, never a free key.
func TestEncodeParse(t *testing.T) {
	t.Parallel()
	rec := locks.Lock{Key: "src/a.go", Holder: "agent-1", ExpiresAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Token: "t", Fence: 7}
	data, err := Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "}\n") || strings.Count(string(data), "\n") != 1 {
		t.Fatalf("Encode = %q, want one JSON object and a newline", data)
	}
	got, err := Parse(data)
	if err != nil || got.Key != rec.Key || got.Fence != rec.Fence || !got.ExpiresAt.Equal(rec.ExpiresAt) {
		t.Fatalf("Parse(Encode(rec)) = %+v, %v", got, err)
	}
	if _, err := Encode(locks.Lock{Key: "x"}); err == nil {
		t.Fatal("Encode of a record without expiry: no error")
	}
	for _, bad := range []string{"", " \n", "{", "null", `{"key":"x"}`, `{"expires_at":"2030-01-02T03:04:05Z"}`, string(data[:len(data)/2])} {
		if l, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", bad, l)
		}
	}
}

// Name puts each kind of key in its directory, named after its identity.
func TestName(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"src/a.go":  "src%2Fa.go.lock",
		"Src/A.go":  "src%2Fa.go.lock",
		"src/**":    "patterns/src%2F%2A%2A.lock",
		"task:T1":   "keys/task%3A%541.lock",
		"workflow":  "keys/workflow.lock",
		"api:GET /": "keys/api%3A%47%45%54%20%2F.lock",
	} {
		if got := Name(key); got != want {
			t.Errorf("Name(%q) = %q, want %q", key, got, want)
		}
		if k, ok := KeyOfName(want); !ok || Name(k) != want {
			t.Errorf("KeyOfName(%q) = %q, %v: not the key named so", want, k, ok)
		}
	}
}
