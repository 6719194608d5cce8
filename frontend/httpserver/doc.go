// Package httpserver is the HTTP front end (`lockgate serve`): it serves
// the lock table over HTTP or HTTPS, at /healthz, as the git-lfs File
// Locking API under /lfs, as the JSON API under /api/v1 and as the web
// board at /, from which a signed-in user can clear a lock. Each request
// is authenticated, decoded, answered by one service method, encoded as
// JSON and logged in one line.
package httpserver
