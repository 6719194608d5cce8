// Package httpserver is the HTTP front end (`lockgate serve`): it serves
// the lock table over HTTP, at /healthz and as the git-lfs File Locking
// API under /lfs. Each request is authenticated, decoded, answered by one
// service method and encoded as JSON.
package httpserver
