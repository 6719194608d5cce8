package httpserver

import (
	"context"
	"net/http"

	"github.com/lockgate/lockgate/service"
)

// The git-lfs File Locking API's requests
// (https://github.com/git-lfs/git-lfs/blob/main/docs/api/locking.md).
// The ref a client sends picks the branch of a lock under
// locks.per_branch (the service decides).
type (
	lfsRef struct {
		Name string `json:"name"`
	}
	createBody struct {
		Path string  `json:"path"`
		Ref  *lfsRef `json:"ref"`
	}
	verifyBody struct {
		Cursor string  `json:"cursor"`
		Limit  int     `json:"limit"`
		Ref    *lfsRef `json:"ref"`
	}
	unlockBody struct {
		Force bool    `json:"force"`
		Ref   *lfsRef `json:"ref"`
	}
)

// refName is the name ref gives, "" when the client sent none.
func refName(ref *lfsRef) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

func (s *Server) createLock(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b createBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	l, err := e.LFSCreateLock(ctx, service.LFSCreateRequest{Path: b.Path, Ref: refName(b.Ref)})
	return http.StatusCreated, map[string]any{"lock": l}, err
}

func (s *Server) listLocks(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	limit, err := limitOf(q.Get("limit"))
	if err != nil {
		return 0, nil, err
	}
	res, err := e.LFSListLocks(ctx, service.LFSListRequest{Path: q.Get("path"), ID: q.Get("id"), Cursor: q.Get("cursor"), Refspec: q.Get("refspec"), Limit: limit})
	return http.StatusOK, res, err
}

func (s *Server) verifyLocks(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b verifyBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	res, err := e.LFSVerifyLocks(ctx, service.LFSVerifyRequest{Cursor: b.Cursor, Ref: refName(b.Ref), Limit: b.Limit})
	return http.StatusOK, res, err
}

func (s *Server) unlock(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b unlockBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	l, err := e.LFSUnlock(ctx, service.LFSUnlockRequest{ID: r.PathValue("id"), Ref: refName(b.Ref), Force: b.Force})
	return http.StatusOK, map[string]any{"lock": l}, err
}
