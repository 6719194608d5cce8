// Package scope evaluates a change set against lockgate's scope policy
// (SPEC §6, the `scope:` section of .lockgate.yaml): which paths only people
// may change (user_owned), which are never part of a backfill change (core),
// which paths a profile allows, which paths need a logical lock held
// (key_rules), and which branches take no direct commits
// (protected_branches).
//
// The package is pure: it does no I/O and reports violations as data. A
// git hook runs it on every commit, so patterns are compiled once into a
// [Matcher] that answers "which patterns match this path" with a handful of
// map lookups per path instead of one doublestar.Match call per pattern. The
// Matcher gives exactly the answers of doublestar.Match (v4); a fuzz target
// and a property test hold it to that.
package scope
