// Package gittest makes hermetic git repositories for tests: no user or
// system config, a private HOME, fixed identities and dates, and the
// environment passed per command so tests can run in parallel.
package gittest
