// Package diffpath turns git's diff output into the repository paths a
// change touches. It is pure: it reads only the bytes or the io.Reader it
// is given, runs nothing, and imports only the standard library and
// internal/safetext (to quote names in its errors). Running
// git is internal/gitexec's job; deciding what a path may do is scope's.
//
// # Formats
//
// Prefer the -z formats, which git writes without quoting or ambiguity.
// ParseNameStatusZ reads
//
//	git -c core.quotePath=false diff --cached --name-status -z -M --no-ext-diff
//
// whose entries are a status and one or two NUL-ended paths:
//
//	M\0bridge/loop.py\0
//	R087\0old name\0new name\0
//	C100\0src\0dst\0
//
// ParseRawZ reads the same diff in --raw -z form, including the combined
// records of a merge (one ':' and one status letter per parent):
//
//	:100644 100644 1a2b3c4 5d6e7f8 M\0path\0
//	::100644 100644 100644 1a2b3c4 5d6e7f8 9a8b7c6 MM\0path\0
//
// TreeReader streams git diff-tree --stdin over many commits, one commit at
// a time, for hooks that must check every commit of a push:
//
//	git rev-list <old>..<new> | git diff-tree --stdin -r -z --name-status -M --root [--cc]
//
// which prints, for each commit that changes something, its object name and
// then its entries (git prints no parent names):
//
//	<40 or 64 hex digits>\0M\0path\0A\0other\0
//
// ParsePatch reads unified diffs for `lockgate check --patch`: git diff and
// format-patch output with any prefix style, combined diffs of merges, and
// plain diff -u / diff -ruN output. Its documentation lists the rules that
// turn the "diff --git", "---"/"+++" and rename/copy headers into paths.
//
// # Paths
//
// Every returned path has gone through Normalize: repository-relative, "/"
// separated, no ".", ".." or empty components, no .git component. A path
// that cannot be made so is an error, never silently dropped, so a caller
// that enforces locks can fail closed. Prefixes are removed by exact match
// only: "a/bridge/loop.py" is "bridge/loop.py", never "ridge/loop.py", the
// bug that trimming the characters "a/" (Python's lstrip) causes.
//
// Change.Touched lists both sides of a rename or copy: a lock on either
// side must be honoured.
//
// # Errors
//
// Bad paths are *PathError and malformed input is *SyntaxError, both with
// the position of the problem; an error from an io.Reader is returned
// wrapped as it is. No input makes these functions panic; fuzz targets
// check that.
package diffpath
