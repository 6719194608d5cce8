//go:build !linux

package hooks

// pushArgs cannot read the git push's arguments here: a --mirror or
// --prune push is only caught through remote.<name>.mirror (see
// guardPruned).
func pushArgs() []string { return nil }
