package serveusers

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/crypto/bcrypt"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/scope"
	"github.com/lockgate/lockgate/service/session"
)

// usersFile is where `lockgate serve` keeps its users, in the
// repository's git directory: never in the work tree, never committed.
const usersFile = "serve-users.json"

// tokenPrefix starts every serve token, so that a token pasted in the
// wrong place is recognisable, and so that the user id after it finds
// the one hash to compare a bearer token against.
const tokenPrefix = "lgs_"

// User is a user of `lockgate serve`: its name (the worker id of the
// locks it takes), its type and whether it is an admin.
type User = session.ServeUser

// Users are the users of one repository's `lockgate serve`, kept in one
// file in Dir (the repository's lockgate directory in its git directory).
type Users struct {
	Dir string
	Now func() time.Time // when a user is added
}

// storedUser is User as the users file holds it, with the token's
// public part (ID: a bearer token names its user by it) and its hash. A
// file written before admins existed has no admin field: its users are
// not admins.
type storedUser struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"`
	Admin   bool      `json:"admin,omitempty"`
	Created time.Time `json:"created"`
	ID      string    `json:"id"`
	Hash    string    `json:"hash"`
}

// AuthError is a request to `lockgate serve` without a valid token.
type AuthError struct{ Msg string }

func (e *AuthError) Error() string { return e.Msg }

// AddRequest is `serve user add NAME [--type human|agent] [--admin]`.
type AddRequest struct {
	Name, Type string
	Admin      bool
}

// AddResult is the user added and its token, which is shown once and
// kept nowhere.
type AddResult struct {
	User  User
	Token string
}

// usersMu keeps one process's changes of the users file in order; the
// file itself is replaced atomically, so readers never see half of it.
var usersMu sync.Mutex

func (s Users) path() string { return filepath.Join(s.Dir, usersFile) }

// read reads the users file; a missing file is no users.
func (s Users) read() ([]storedUser, error) {
	data, err := safefs.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the serve users: %w", err)
	}
	var us []storedUser
	if err := json.Unmarshal(data, &us); err != nil {
		return nil, fmt.Errorf("reading the serve users %s: %w", s.path(), err)
	}
	return us, nil
}

// write replaces the users file atomically, readable by its owner only.
func (s Users) write(us []storedUser) error {
	dir := s.Dir
	if err := safefs.MkdirAll(dir, 0o700, 1); err != nil {
		return fmt.Errorf("writing the serve users: %w", err)
	}
	data, err := json.MarshalIndent(us, "", "  ")
	if err != nil {
		return fmt.Errorf("writing the serve users: %w", err)
	}
	tmp, err := os.CreateTemp(dir, usersFile+".*")
	if err != nil {
		return fmt.Errorf("writing the serve users: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; left only by a failure
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(append(data, '\n'))
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path())
	}
	if err != nil {
		return fmt.Errorf("writing the serve users: %w", err)
	}
	return nil
}

// Add adds a user of `lockgate serve` and returns its new token.
func (s Users) Add(r AddRequest) (AddResult, error) {
	if r.Type == "" {
		r.Type = scope.WorkerHuman
	}
	if r.Type != scope.WorkerHuman && r.Type != scope.WorkerAgent {
		return AddResult{}, session.Usagef("serve user add: --type must be human or agent, not %q", r.Type)
	}
	if err := checkUserName(r.Name); err != nil {
		return AddResult{}, err
	}
	if _, err := session.NewOwner(r.Name, r.Type, r.Name); err != nil {
		return AddResult{}, session.Usagef("serve user add: the name is the worker id of the user's locks: %v", err)
	}
	usersMu.Lock()
	defer usersMu.Unlock()
	us, err := s.read()
	if err != nil {
		return AddResult{}, err
	}
	if slices.ContainsFunc(us, func(u storedUser) bool { return u.Name == r.Name }) {
		return AddResult{}, session.Usagef("serve user add: %s exists (remove it first to give it a new token)", r.Name)
	}
	// 8 bytes name the user, 32 random ones are the secret (bcrypt reads
	// the token's first 72 bytes; this one has 61).
	var id [8]byte
	var secret [32]byte
	if _, err := rand.Read(id[:]); err != nil {
		return AddResult{}, fmt.Errorf("making a token: %w", err)
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return AddResult{}, fmt.Errorf("making a token: %w", err)
	}
	token := tokenPrefix + hex.EncodeToString(id[:]) + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
	su := storedUser{Name: r.Name, Type: r.Type, Admin: r.Admin, Created: s.Now().UTC(), ID: hex.EncodeToString(id[:]), Hash: tokenHash(token)}
	if err := s.write(append(us, su)); err != nil {
		return AddResult{}, err
	}
	return AddResult{User: su.user(), Token: token}, nil
}

// sha256Hash starts the hash of a token written by this version.
const sha256Hash = "sha256:"

// tokenHash is what the users file keeps of a token: its SHA-256. A
// token's secret is 256 random bits, which no one guesses, so a slow hash
// (bcrypt, made for passwords people choose) would add nothing but its
// cost to every new token the server checks. Files of earlier versions
// keep bcrypt hashes; matches still checks them.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return sha256Hash + hex.EncodeToString(sum[:])
}

// matches reports whether token is the one hash was made of: a SHA-256
// hash (tokenHash) or an earlier version's bcrypt hash.
func matches(hash, token string) bool {
	if want, ok := strings.CutPrefix(hash, sha256Hash); ok {
		got := strings.TrimPrefix(tokenHash(token), sha256Hash)
		return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(token)) == nil
}

// checkUserName refuses a name HTTP Basic auth cannot log in with: the
// name ends at the first ':' of NAME:TOKEN, and a name with whitespace
// does not survive the URLs git-lfs is given (NAME:TOKEN@HOST). The
// worker-id rule (session.NewOwner) is checked beside it.
func checkUserName(name string) error {
	if i := strings.IndexFunc(name, func(r rune) bool { return r == ':' || unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return session.Usagef("serve user add: name %q: a user logs in with HTTP Basic NAME:TOKEN, so a name holds no ':', whitespace or control character (found %q)",
			lockkey.Shorten(name), string([]rune(name[i:])[0]))
	}
	return nil
}

func (s storedUser) user() User {
	return User{Name: s.Name, Type: s.Type, Admin: s.Admin, Created: s.Created}
}

// List is every user of `lockgate serve`, in the order added.
func (s Users) List() ([]User, error) {
	us, err := s.read()
	if err != nil {
		return nil, err
	}
	out := make([]User, 0, len(us))
	for _, u := range us {
		out = append(out, u.user())
	}
	return out, nil
}

// Remove removes a user: its token stops working at once. The locks
// it holds stay until they expire or are released or cleared.
func (s Users) Remove(name string) error {
	usersMu.Lock()
	defer usersMu.Unlock()
	us, err := s.read()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(us, func(u storedUser) bool { return u.Name == name })
	if i < 0 {
		return session.Usagef("serve user remove: no user %s", name)
	}
	return s.write(slices.Delete(us, i, i+1))
}

// verified remembers tokens already checked against their hash, by the
// token's SHA-256 and the hash it matched, so that each request does not
// ask beforeHash (nor pay an earlier version's bcrypt check) again; a
// removed or re-added user's hash differs, so its old token is checked
// (and refused) afresh.
var verified sync.Map // [32]byte → string

// Authenticate is the user a token belongs to. name is the user a Basic
// login names, "" for a bearer token (whose id part names the user).
// beforeHash, when set, is asked before a token not yet verified is
// checked against its hash: its error refuses the token unchecked, so
// that a flood of wrong tokens can be limited (a bcrypt hash of an
// earlier version costs tens of milliseconds to check).
func (s Users) Authenticate(name, token string, beforeHash func() error) (User, error) {
	refused := &AuthError{Msg: "a valid token is needed (lockgate serve user add NAME)"}
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return User{}, refused
	}
	id, _, ok := strings.Cut(rest, "_")
	if !ok {
		return User{}, refused
	}
	us, err := s.read()
	if err != nil {
		return User{}, err
	}
	i := slices.IndexFunc(us, func(u storedUser) bool { return u.ID == id })
	if i < 0 || (name != "" && us[i].Name != name) {
		return User{}, refused
	}
	u := us[i]
	sum := sha256.Sum256([]byte(token))
	if h, ok := verified.Load(sum); ok && subtle.ConstantTimeCompare([]byte(h.(string)), []byte(u.Hash)) == 1 {
		return u.user(), nil
	}
	if beforeHash != nil {
		if err := beforeHash(); err != nil {
			return User{}, err
		}
	}
	if !matches(u.Hash, token) {
		return User{}, refused
	}
	verified.Store(sum, u.Hash)
	return u.user(), nil
}
