// Package duration parses the durations lockgate takes on its command
// line and in its configuration: Go's (90s, 30m, 1h30m) plus days and
// weeks (2d, 1w, 4d3h). It also writes them (Format, Until) in the form
// Parse reads, so that a duration lockgate prints can be given back to a
// flag as it is.
package duration
