package service

import (
	"os"
	"strings"
	"testing"
)

// TestServeUserAdmin: a user added as an admin is one in the users file,
// in the list and once authenticated; a users file written before admins
// existed (no admin field) reads as users who are not.
func TestServeUserAdmin(t *testing.T) {
	f := newLockFixture(t)
	e := f.as("admin")
	root, err := e.AddUser(UserAddRequest{Name: "root", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := e.AddUser(UserAddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !root.User.Admin || alice.User.Admin {
		t.Fatalf("added %+v and %+v", root.User, alice.User)
	}
	us, err := e.ListUsers()
	if err != nil || len(us) != 2 || !us[0].Admin || us[1].Admin {
		t.Fatalf("ListUsers = %+v, %v", us, err)
	}
	if u, err := e.Authenticate("", root.Token, nil); err != nil || !u.Admin {
		t.Fatalf("Authenticate root = %+v, %v", u, err)
	}

	// An earlier version's file: no admin field anywhere.
	data, err := os.ReadFile(e.usersPath())
	if err != nil {
		t.Fatal(err)
	}
	old := strings.ReplaceAll(string(data), `"admin": true,`, "")
	if old == string(data) || strings.Contains(old, "admin") {
		t.Fatalf("the users file does not keep the admin field as expected:\n%s", data)
	}
	if err := os.WriteFile(e.usersPath(), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	us, err = e.ListUsers()
	if err != nil || len(us) != 2 || us[0].Admin || us[1].Admin {
		t.Fatalf("ListUsers of the earlier file = %+v, %v", us, err)
	}
	if u, err := e.Authenticate("root", root.Token, nil); err != nil || u.Admin {
		t.Fatalf("Authenticate root from the earlier file = %+v, %v", u, err)
	}
}
