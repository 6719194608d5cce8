//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package termstyle

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
