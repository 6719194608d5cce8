// Package scope evaluates a change set against lockgate's scope policy
// (the `scope:` section of .lockgate.yaml, docs/config.md): which paths only people
// may change (user_owned), which are never part of a backfill change (core),
// which paths a profile allows, which paths need a logical lock held
// (key_rules), and which branches take no direct commits
// (protected_branches).
//
// The package is pure: it does no I/O and reports violations as data. A
// git hook runs it on every commit, so patterns are compiled once into a
// [Matcher] that answers "which patterns match this path" with a handful of
// map lookups per path instead of one doublestar.Match call per pattern. The
// Matcher gives exactly the answers of doublestar.Match (v4, the version in
// go.mod); FuzzMatcher and TestMatcherProperty hold it to that, and are the
// first thing to run after upgrading doublestar.
//
// Matching with IgnoreCase (core.ignorecase) folds pattern and path as
// lock keys are folded (lockkey.Folded). Branch names are always matched case-sensitively, as
// git compares ref names.
package scope
