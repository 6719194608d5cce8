// Package safetext keeps text from other workers — worker ids, sessions,
// reasons, keys, paths — from steering the terminal it is printed on.
//
// Control characters (ESC, BEL, …), format characters (bidirectional
// overrides such as U+202E, zero-width characters such as U+200B) and line
// or paragraph separators (U+2028, U+2029) can recolour a terminal, rewrite
// what was printed before, or make one name read as another. lockgate
// refuses them in the names it takes (worker ids, keys, task ids) and
// escapes them wherever it prints text it did not write itself: records
// written by older versions or by other tools may still hold them.
package safetext
