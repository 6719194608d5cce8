// Package safefs opens and creates lockgate's own files and directories
// (under <git-common-dir>/lockgate) without following symbolic links, so
// that a link planted there cannot make lockgate read or overwrite a file
// elsewhere. Directories must be real directories owned by the user
// running lockgate; anything else is refused with an *UnsafePathError.
package safefs
