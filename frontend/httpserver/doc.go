// Package httpserver is the HTTP front end (`lockgate serve`): it serves
// the lock table over HTTP or HTTPS, at /healthz, as the git-lfs File
// Locking API under /lfs and as the JSON API under /api/v1. Each request
// is authenticated, decoded, answered by one service method, encoded as
// JSON and logged in one line.
package httpserver
