// Package board is `lockgate board`: a live view of the locks for people
// running many workers — paused features on top, every live lock with its
// holder, key, reason and a bar of its remaining time, stale and corrupt
// records marked, the last events below. Frame renders one view as text
// (for --once and for output that is not a terminal); Run drives it full
// screen on a raw terminal, refreshed every second, with keys to filter by
// worker, sort, and clear a selected lock after a confirmation. When the
// repository has a work packages file, the queue is shown beside the
// locks: its counts by state and the packages that matter most. What a
// frame shows is read by the service (service.Board), one listing of the
// store a frame; the package renders it and reads the keys.
package board
