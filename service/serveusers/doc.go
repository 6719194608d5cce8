// Package serveusers keeps the users of `lockgate serve` and checks their
// tokens: who may log in, as which worker, and whether as an admin. It
// knows one file and nothing of locks, so that the server's front end
// and `lockgate serve user …` share it without the rest of the service.
package serveusers
