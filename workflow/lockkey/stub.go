package lockkey

import "strings"

// IsPattern reports whether a canonical key covers more than itself.
// STUB: replaced by the real implementation.
func IsPattern(key string) bool { return strings.ContainsAny(key, "*?[{") }

// Overlap reports whether two canonical keys may name a common resource.
// STUB: replaced by the real implementation.
func Overlap(a, b string) bool { return a == b }
