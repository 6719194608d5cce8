// Package gitexec is the only package that runs the git binary. It also
// finds a repository's directories without running git when the layout is
// the ordinary one, because a lock command should cost less than a git call.
package gitexec
