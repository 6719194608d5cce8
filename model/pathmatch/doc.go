// Package pathmatch matches repo-relative paths against many doublestar
// patterns at once, with exactly doublestar.Match's answers but a few map
// lookups per path instead of one match per pattern: a hook checks every
// staged path against the whole policy and every lock pattern. It does no
// I/O.
package pathmatch
