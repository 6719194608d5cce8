package hooks

import (
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/scope"
)

// CheckOwner is the one rule of what a worker is, wherever it is named:
// by --as and the environment (the service resolves a request's identity
// and first turns its session into one lockgate writes, SessionOf) or by
// a commit's trailers (CommitAuthor, which takes the values as written).
// It refuses, in this order:
//   - a worker type other than human or agent;
//   - a worker id that is empty, longer than locks.MaxHolderLen, padded
//     with whitespace or holding a control character, and a session longer
//     than locks.MaxSessionLen or so padded (locks.Owner.Check);
//   - a worker id that would print as something else: invalid UTF-8, a
//     format or separator character (safetext.Check);
//   - a session of other characters than [A-Za-z0-9._@:-]. The session may
//     be empty: trailers may leave it out, and the worker's own name
//     stands in for it when a command resolves its identity.
func CheckOwner(o locks.Owner) error {
	if o.HolderType != scope.WorkerHuman && o.HolderType != scope.WorkerAgent {
		return fmt.Errorf("worker type %q: want human or agent", lockkey.Shorten(o.HolderType))
	}
	if err := o.Check(); err != nil {
		return err
	}
	if err := safetext.Check("worker id", o.Holder); err != nil {
		return err
	}
	if !sessionID(o.Session) {
		return fmt.Errorf("session %q: only A-Z, a-z, 0-9 and ._@:- (SessionOf makes one so)", lockkey.Shorten(o.Session))
	}
	return nil
}

// SessionOf is s as lockgate writes a session: every character outside
// [A-Za-z0-9._@:-] becomes '-', so that a session id stays printable and
// passes CheckOwner.
func SessionOf(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && sessionByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// sessionID reports a session as lockgate writes it (SessionOf).
func sessionID(s string) bool {
	for i := 0; i < len(s); i++ {
		if !sessionByte(s[i]) {
			return false
		}
	}
	return true
}

func sessionByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._@:-", c) >= 0
}
