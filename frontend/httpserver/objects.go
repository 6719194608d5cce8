package httpserver

import (
	"encoding/json"
	"net/http"
)

// noObjects is what a git-lfs client learns when it sends files to the
// server: lockgate serve holds locks, never file contents.
const noObjects = "lockgate serve stores no files, only locks: git-lfs sent its objects here because lfs.url points at it. " +
	"Files stored with git-lfs: unset lfs.url (`git config --unset lfs.url`) so that their contents go to the repository's own LFS server, " +
	"point a remote of its own at lockgate serve for the locks (`git remote add locks URL`, `git config remote.locks.lfsurl http://HOST:PORT/lfs`) " +
	"and lock with `git lfs lock --remote locks PATH`; see docs/serve.md"

// objects answers the git-lfs transfer API (the batch API and every other
// path under /lfs/objects/) with an error git-lfs shows its user:
// without it git-lfs reports a bare 404, "Repository or object not
// found", and leaves the user guessing. The status is 501 Not
// Implemented, which git-lfs 3 reports with the message as it is and
// does not retry. No token is needed: the answer reveals nothing, and a
// client that asks for credentials first would only delay the message.
func (s *Server) objects(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", lfsType)
	if err := s.admit(r); err != nil {
		s.fail(w, r, requestIDOf(r), err)
		return
	}
	w.WriteHeader(http.StatusNotImplemented)
	_ = json.NewEncoder(w).Encode(lfsError{Message: noObjects, RequestID: requestIDOf(r)}) // the client gone: nothing to tell
}
