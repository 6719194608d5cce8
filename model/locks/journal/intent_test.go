package journal

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestIntentRecover(t *testing.T) {
	t.Parallel()
	j := Open(filepath.Join(t.TempDir(), "events.jsonl"))
	ev := func(id string) Event { return Event{ID: id, Worker: "w", Action: ActionAcquire, Key: id} }
	live, err := j.Intend([]byte("live"))
	if err != nil {
		t.Fatal(err)
	}
	dead, err := j.Intend([]byte("dead"))
	if err != nil {
		t.Fatal(err)
	}
	dead.Leave()
	appended, err := j.Intend([]byte("appended"))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ev("e2")); err != nil {
		t.Fatal(err)
	}
	appended.Leave() // died after appending, before removing its intent
	seen := map[string]bool{}
	// A process another test of the package forks in the instant an
	// intent's file is open holds its flock until that process execs, so
	// a dead intent can look alive for a moment: recover until both are
	// settled (a live one is never settled, however often it is asked).
	for deadline := time.Now().Add(10 * time.Second); !(seen["dead"] && seen["appended"]) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		err = j.Recover(func(data []byte) ([]Event, error) {
			seen[string(data)] = true
			switch string(data) {
			case "dead":
				return []Event{ev("e1")}, nil
			case "appended":
				return []Event{ev("e2")}, nil
			}
			t.Errorf("settled %q", data)
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !seen["dead"] || !seen["appended"] || seen["live"] {
		t.Fatalf("settled %v, want the dead and appended intents only", seen)
	}
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].ID != "e2" || evs[1].ID != "e1" {
		t.Fatalf("journal %+v, want e2 then e1, once each", evs)
	}
	if err := live.Done(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(j.intentDir()); len(ents) != 0 {
		t.Fatalf("intents left: %v", ents)
	}
}

func TestIntendRefusesUnwritableJournal(t *testing.T) {
	t.Parallel()
	j := Open(filepath.Join(t.TempDir(), "events.jsonl"))
	if err := os.Mkdir(j.Path(), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Intend([]byte("x")); err == nil {
		t.Fatal("Intend with events.jsonl a directory succeeded")
	}
	if ents, _ := os.ReadDir(j.intentDir()); len(ents) != 0 {
		t.Fatalf("intents left: %v", ents)
	}
}
