package service

import (
	"github.com/lockgate/lockgate/service/serveusers"
	"github.com/lockgate/lockgate/service/session"
)

// Users are the users of `lockgate serve`, kept in the repository's git
// directory (never in the work tree, never committed).
func (e *Workspace) Users() serveusers.Users {
	return serveusers.Users{Dir: e.StateDir(), Now: e.Now}
}

// As is the workspace acting as user u, who becomes the worker id and
// type of every lock it takes, and whose role decides whose locks it may
// force (ForceCheck); the store and the manager are shared.
func (e *Workspace) As(u ServeUser) (*Workspace, error) {
	o, err := session.NewOwner(u.Name, u.Type, u.Name)
	if err != nil {
		return nil, err
	}
	c := *e.Workspace // the session is copied: its identity is this user's alone
	c.Me, c.ServeUser = o, &u
	return wrap(&c), nil
}
