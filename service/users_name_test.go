package service

import (
	"strings"
	"testing"
)

// TestAddUserRefusesNamesBasicAuthCannotLogIn: a serve user's name is
// its Basic auth login and its worker id, so a name with ':', whitespace
// or a control character, or one the worker-id rule refuses, is a usage
// error naming the rule; a plain name passes.
func TestAddUserRefusesNamesBasicAuthCannotLogIn(t *testing.T) {
	f := newLockFixture(t)
	e := f.as("admin")
	for _, name := range []string{"x:y", "bad name", "tab\tname", "nl\nname", "", " alice", "alice\u00a0b", "bell\x07"} {
		_, err := e.AddUser(UserAddRequest{Name: name})
		wantErr[*UsageError](t, err)
		if err != nil && !strings.Contains(err.Error(), "serve user add") {
			t.Errorf("AddUser(%q): %v; want the command named", name, err)
		}
	}
	us, err := e.ListUsers()
	if err != nil || len(us) != 0 {
		t.Fatalf("users after refusals: %+v, %v", us, err)
	}
	for _, name := range []string{"alice", "ci-bot@build.example", "Zoë"} {
		if _, err := e.AddUser(UserAddRequest{Name: name}); err != nil {
			t.Errorf("AddUser(%q): %v", name, err)
		}
	}
}
