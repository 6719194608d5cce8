// Package lockkey defines lockgate's lock keys: the kinds of docs/keys.md, their
// canonical form, validation with messages that show the expected form, and
// the conservative overlap test between keys. It does no I/O.
package lockkey
