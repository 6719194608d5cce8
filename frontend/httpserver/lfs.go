package httpserver

import (
	"context"
	"net/http"

	"github.com/lockgate/lockgate/service"
)

// The git-lfs File Locking API's requests
// (https://github.com/git-lfs/git-lfs/blob/main/docs/api/locking.md).
// The ref a client sends is not used: a lockgate lock holds on every
// branch.
type (
	createBody struct {
		Path string `json:"path"`
	}
	verifyBody struct {
		Cursor string `json:"cursor"`
		Limit  int    `json:"limit"`
	}
	unlockBody struct {
		Force bool `json:"force"`
	}
)

func (s *Server) createLock(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b createBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	l, err := e.LFSCreateLock(ctx, service.LFSCreateRequest{Path: b.Path})
	return http.StatusCreated, map[string]any{"lock": l}, err
}

func (s *Server) listLocks(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	limit, err := limitOf(q.Get("limit"))
	if err != nil {
		return 0, nil, err
	}
	res, err := e.LFSListLocks(ctx, service.LFSListRequest{Path: q.Get("path"), ID: q.Get("id"), Cursor: q.Get("cursor"), Limit: limit})
	return http.StatusOK, res, err
}

func (s *Server) verifyLocks(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b verifyBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	res, err := e.LFSVerifyLocks(ctx, service.LFSVerifyRequest{Cursor: b.Cursor, Limit: b.Limit})
	return http.StatusOK, res, err
}

func (s *Server) unlock(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b unlockBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	l, err := e.LFSUnlock(ctx, service.LFSUnlockRequest{ID: r.PathValue("id"), Force: b.Force})
	return http.StatusOK, map[string]any{"lock": l}, err
}
