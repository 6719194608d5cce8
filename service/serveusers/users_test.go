package serveusers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/lockgate/lockgate/service/session"
)

// wantErr fails t unless err is an E.
func wantErr[E error](t *testing.T, err error) {
	t.Helper()
	if !errors.As(err, new(E)) {
		t.Fatalf("error %v (%T), want a %T", err, err, *new(E))
	}
}

func TestServeUsers(t *testing.T) {
	dir := t.TempDir()
	e := Users{Dir: dir, Now: time.Now}
	alice, err := e.Add(AddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if alice.User.Type != "human" || !strings.HasPrefix(alice.Token, tokenPrefix) {
		t.Fatalf("added %+v, token %q", alice.User, alice.Token)
	}
	bot, err := e.Add(AddRequest{Name: "bot", Type: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Add(AddRequest{Name: "alice"})
	wantErr[*session.UsageError](t, err)
	_, err = e.Add(AddRequest{Name: "carol", Type: "robot"})
	wantErr[*session.UsageError](t, err)

	// Only a hash is kept, in the git directory, readable by its owner.
	fi, err := os.Stat(filepath.Join(dir, usersFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("users file mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(filepath.Join(dir, usersFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), alice.Token) || strings.Contains(string(data), strings.SplitN(alice.Token, "_", 3)[2]) {
		t.Error("the users file holds a token's secret")
	}

	us, err := e.List()
	if err != nil || len(us) != 2 || us[0].Name != "alice" || us[1].Type != "agent" {
		t.Fatalf("List = %+v, %v", us, err)
	}
	for _, tc := range []struct {
		name, user, token string
		want              string // "" refused
	}{
		{name: "basic", user: "alice", token: alice.Token, want: "alice"},
		{name: "bearer", token: bot.Token, want: "bot"},
		{name: "basic, the token twice (cached)", user: "alice", token: alice.Token, want: "alice"},
		{name: "another user's token", user: "alice", token: bot.Token},
		{name: "wrong secret", user: "alice", token: alice.Token[:len(alice.Token)-2] + "xx"},
		{name: "no token", user: "alice"},
		{name: "not a token", token: "hunter2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := e.Authenticate(tc.user, tc.token, nil)
			if tc.want == "" {
				wantErr[*AuthError](t, err)
				return
			}
			if err != nil || u.Name != tc.want {
				t.Fatalf("Authenticate = %+v, %v; want %s", u, err, tc.want)
			}
		})
	}

	if err := e.Remove("alice"); err != nil {
		t.Fatal(err)
	}
	_, err = e.Authenticate("alice", alice.Token, nil)
	wantErr[*AuthError](t, err)
	wantErr[*session.UsageError](t, e.Remove("alice"))
}

// TestAuthenticateAsksBeforeHash: a token not yet verified is checked
// against its bcrypt hash only after beforeHash agrees, and its refusal
// stops the check; a verified token is not asked about again, and a token
// of no user is refused without it.
func TestAuthenticateAsksBeforeHash(t *testing.T) {
	dir := t.TempDir()
	e := Users{Dir: dir, Now: time.Now}
	alice, err := e.Add(AddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	limited := errors.New("too many")
	asked := 0
	refuse := func() error { asked++; return limited }
	allow := func() error { asked++; return nil }

	wrong := alice.Token[:len(alice.Token)-2] + "xx"
	if _, err := e.Authenticate("alice", wrong, refuse); !errors.Is(err, limited) || asked != 1 {
		t.Fatalf("a wrong token, the check refused: %v, asked %d; want the refusal, asked once", err, asked)
	}
	if _, err := e.Authenticate("alice", alice.Token, refuse); !errors.Is(err, limited) {
		t.Fatalf("an unverified right token, the check refused: %v", err)
	}
	if u, err := e.Authenticate("alice", alice.Token, allow); err != nil || u.Name != "alice" {
		t.Fatalf("the right token, allowed: %+v %v", u, err)
	}
	asked = 0
	if u, err := e.Authenticate("alice", alice.Token, refuse); err != nil || u.Name != "alice" || asked != 0 {
		t.Fatalf("a verified token: %+v %v, asked %d; want alice without asking", u, err, asked)
	}
	if _, err := e.Authenticate("", tokenPrefix+"nosuchid_secret", refuse); asked != 0 {
		t.Fatalf("a token of no user: %v, asked %d; want refused without asking", err, asked)
	}
}

// TestTokenHashes: the users file keeps a token's SHA-256 hash, never the
// token; a user added by an earlier version, whose file holds a bcrypt
// hash, still logs in with its token; a wrong token matches neither.
func TestTokenHashes(t *testing.T) {
	dir := t.TempDir()
	e := Users{Dir: dir, Now: time.Now}
	alice, err := e.Add(AddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(e.path())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(alice.Token))
	if !strings.Contains(string(data), `"hash": "sha256:`+hex.EncodeToString(sum[:])+`"`) || strings.Contains(string(data), alice.Token) {
		t.Fatalf("the users file holds no SHA-256 hash of the token, or the token itself:\n%s", data)
	}

	// A user as an earlier version wrote it.
	old := tokenPrefix + "0123456789abcdef_" + strings.Repeat("s", 43)
	hash, err := bcrypt.GenerateFromPassword([]byte(old), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	us, err := e.read()
	if err != nil {
		t.Fatal(err)
	}
	us = append(us, storedUser{Name: "bob", Type: "human", Created: time.Now().UTC(), ID: "0123456789abcdef", Hash: string(hash)})
	if err := e.write(us); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, token string }{{"alice", alice.Token}, {"bob", old}} {
		if u, err := e.Authenticate(c.name, c.token, nil); err != nil || u.Name != c.name {
			t.Errorf("%s's token: %+v %v", c.name, u, err)
		}
		wrong := c.token[:len(c.token)-1] + "x"
		if _, err := e.Authenticate(c.name, wrong, nil); !errors.As(err, new(*AuthError)) {
			t.Errorf("%s's token with its last character changed: %v, want refused", c.name, err)
		}
	}
}

// TestServeUserAdmin: a user added as an admin is one in the users file,
// in the list and once authenticated; a users file written before admins
// existed (no admin field) reads as users who are not.
func TestServeUserAdmin(t *testing.T) {
	dir := t.TempDir()
	e := Users{Dir: dir, Now: time.Now}
	root, err := e.Add(AddRequest{Name: "root", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := e.Add(AddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !root.User.Admin || alice.User.Admin {
		t.Fatalf("added %+v and %+v", root.User, alice.User)
	}
	us, err := e.List()
	if err != nil || len(us) != 2 || !us[0].Admin || us[1].Admin {
		t.Fatalf("List = %+v, %v", us, err)
	}
	if u, err := e.Authenticate("", root.Token, nil); err != nil || !u.Admin {
		t.Fatalf("Authenticate root = %+v, %v", u, err)
	}

	// An earlier version's file: no admin field anywhere.
	data, err := os.ReadFile(e.path())
	if err != nil {
		t.Fatal(err)
	}
	old := strings.ReplaceAll(string(data), `"admin": true,`, "")
	if old == string(data) || strings.Contains(old, "admin") {
		t.Fatalf("the users file does not keep the admin field as expected:\n%s", data)
	}
	if err := os.WriteFile(e.path(), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	us, err = e.List()
	if err != nil || len(us) != 2 || us[0].Admin || us[1].Admin {
		t.Fatalf("ListUsers of the earlier file = %+v, %v", us, err)
	}
	if u, err := e.Authenticate("root", root.Token, nil); err != nil || u.Admin {
		t.Fatalf("Authenticate root from the earlier file = %+v, %v", u, err)
	}
}

// TestAddUserRefusesNamesBasicAuthCannotLogIn: a serve user's name is
// its Basic auth login and its worker id, so a name with ':', whitespace
// or a control character, or one the worker-id rule refuses, is a usage
// error naming the rule; a plain name passes.
func TestAddUserRefusesNamesBasicAuthCannotLogIn(t *testing.T) {
	dir := t.TempDir()
	e := Users{Dir: dir, Now: time.Now}
	for _, name := range []string{"x:y", "bad name", "tab\tname", "nl\nname", "", " alice", "alice\u00a0b", "bell\x07"} {
		_, err := e.Add(AddRequest{Name: name})
		wantErr[*session.UsageError](t, err)
		if err != nil && !strings.Contains(err.Error(), "serve user add") {
			t.Errorf("Add(%q): %v; want the command named", name, err)
		}
	}
	us, err := e.List()
	if err != nil || len(us) != 0 {
		t.Fatalf("users after refusals: %+v, %v", us, err)
	}
	for _, name := range []string{"alice", "ci-bot@build.example", "Zoë"} {
		if _, err := e.Add(AddRequest{Name: name}); err != nil {
			t.Errorf("Add(%q): %v", name, err)
		}
	}
}
