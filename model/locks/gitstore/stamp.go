package gitstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// stampName is the blob that places a state among the states of its lock
// table. Record names end in ".lock", so no record can take it. Releases
// that wrote no stamp find a stranger in the tree and refuse the table.
const stampName = "table"

// The formats of the lock table.
const (
	// formatChain is the table of releases that kept every state as a
	// commit on top of the last: no stamp; a later state contains the
	// earlier ones.
	formatChain = 1
	// formatFlat is the table whose every state is a commit without
	// parents, placed by its stamp.
	formatFlat = 2
)

const stampHeader = "lockgate lock table"

// Stamp places one state of the lock table among the others without
// history: which table it is of and how many changes it is from that
// table's start. A table starts when a change finds the ref absent.
type Stamp struct {
	// Format is formatChain for a state without a stamp, formatFlat for
	// one with, 0 for no state (the ref absent).
	Format int
	// Table names the table: 32 hex digits drawn at random when the table
	// starts, kept by every later state.
	Table string
	// Generation is 1 for a table's first state and one more for each
	// change after it.
	Generation uint64
}

// next is the stamp of the state a change makes on top of s: the first
// state of a new table when s is of none (the ref absent) or of the
// chained format.
func (s Stamp) next() (Stamp, error) {
	if s.Format != formatFlat {
		id := make([]byte, 16)
		if _, err := rand.Read(id); err != nil {
			return Stamp{}, fmt.Errorf("name a new lock table: %w", err)
		}
		return Stamp{Format: formatFlat, Table: hex.EncodeToString(id), Generation: 1}, nil
	}
	if s.Generation == math.MaxUint64 {
		return Stamp{}, fmt.Errorf("lock table %s: generation %d is the last there is", s.Table, s.Generation)
	}
	return Stamp{Format: formatFlat, Table: s.Table, Generation: s.Generation + 1}, nil
}

// String says which state s is, for messages.
func (s Stamp) String() string {
	if s.Format != formatFlat {
		return "a state of an older release's format, without a generation"
	}
	return fmt.Sprintf("generation %d of lock table %s", s.Generation, s.Table[:min(len(s.Table), 8)])
}

// valid reports a stamp parseStamp could have read, the chained
// format's or none.
func (s Stamp) valid() bool {
	if s.Format == formatChain || s.Format == 0 {
		return s.Table == "" && s.Generation == 0
	}
	got, err := parseStamp(s.encode())
	return err == nil && got == s
}

func (s Stamp) encode() []byte {
	return fmt.Appendf(nil, "%s\nformat %d\nid %s\ngeneration %d\n", stampHeader, s.Format, s.Table, s.Generation)
}

// parseStamp reads the stamp blob. Anything but the exact lines lockgate
// writes is an error; a format this release does not know says so, before
// the rest is read, as a newer release may change the rest.
func parseStamp(data []byte) (Stamp, error) {
	lines := strings.Split(string(data), "\n")
	if len(lines) < 2 || lines[0] != stampHeader {
		return Stamp{}, errors.New("the table blob is not a lock table stamp")
	}
	f, ok := strings.CutPrefix(lines[1], "format ")
	format, err := strconv.Atoi(f)
	switch {
	case !ok || err != nil || format < 1 || f != strconv.Itoa(format):
		return Stamp{}, fmt.Errorf("the table blob's format %q is not a number", f)
	case format > formatFlat:
		return Stamp{}, fmt.Errorf("the lock table is of format %d, which this release of lockgate cannot read (it reads formats %d and %d): upgrade lockgate", format, formatChain, formatFlat)
	case format != formatFlat:
		return Stamp{}, fmt.Errorf("the table blob names format %d, whose tables have no such blob", format)
	}
	if len(lines) != 5 || lines[4] != "" {
		return Stamp{}, errors.New("the table blob does not have the four lines of a stamp")
	}
	id, ok := strings.CutPrefix(lines[2], "id ")
	if !ok || len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return Stamp{}, fmt.Errorf("the table blob's id %q is not 32 hex digits", lines[2])
	}
	g, ok := strings.CutPrefix(lines[3], "generation ")
	gen, err := strconv.ParseUint(g, 10, 64)
	if !ok || err != nil || gen == 0 || g != strconv.FormatUint(gen, 10) {
		return Stamp{}, fmt.Errorf("the table blob's generation %q is not a number above 0", g)
	}
	return Stamp{Format: formatFlat, Table: id, Generation: gen}, nil
}

// verdict is how one state of the ref relates to another.
type verdict int

const (
	later   verdict = iota // a later state: nothing is lost
	earlier                // not a later state: a rewind, or another table
	// chained: both states of the chained format; a later one contains
	// the earlier.
	chained
	// onTop: not a later stamp; later all the same if it is a commit on
	// top of the earlier state, made by hand (git commit on the fetched
	// ref, stamp and all), as a chained state was.
	onTop
)

// compare judges whether the state stamped to may follow the state
// stamped from, and says why not. A chained state followed by a stamped
// one is the table's first change by a release that stamps it: that is
// the one step that cannot be judged, as by a clone that never saw the
// table.
func compare(from, to Stamp) (verdict, string) {
	switch {
	case from.Format != formatFlat && to.Format != formatFlat:
		return chained, "which does not contain it"
	case from.Format != formatFlat:
		return later, ""
	case to.Format != formatFlat:
		return earlier, fmt.Sprintf("%s, after %s", to, from)
	case to.Table != from.Table:
		return onTop, fmt.Sprintf("%s, another table than %s", to, from)
	case to.Generation <= from.Generation:
		return onTop, fmt.Sprintf("%s, not after %s", to, from)
	}
	return later, ""
}

// StampAt reads the stamp of the lock table state commit in the
// repository git finds from dir, in this process's environment: a
// pre-receive hook sees the objects of the push it judges only through
// the environment git gives it. A state without a stamp is of the
// chained format.
func StampAt(ctx context.Context, dir, commit string) (Stamp, error) {
	if !gitexec.IsObjectName(commit) {
		return Stamp{}, fmt.Errorf("%q is not a commit's object name", commit)
	}
	out, err := gitexec.Output(ctx, dir, nil, "ls-tree", "-z", commit, "--", stampName)
	if err != nil {
		return Stamp{}, fmt.Errorf("read %s:%s: %w", short(commit), stampName, err)
	}
	entry, _, _ := strings.Cut(string(out), "\x00")
	if entry == "" {
		return Stamp{Format: formatChain}, nil
	}
	meta, name, _ := strings.Cut(entry, "\t")
	f := strings.Fields(meta) // <mode> <type> <object>
	if name != stampName || len(f) != 3 || f[0] != "100644" || f[1] != "blob" || !gitexec.IsObjectName(f[2]) {
		return Stamp{}, fmt.Errorf("%s:%s is not the stamp lockgate writes (%q)", short(commit), stampName, entry)
	}
	data, err := gitexec.Output(ctx, dir, nil, "cat-file", "blob", f[2])
	if err != nil {
		return Stamp{}, fmt.Errorf("read %s:%s: %w", short(commit), stampName, err)
	}
	st, err := parseStamp(data)
	if err != nil {
		return Stamp{}, fmt.Errorf("%s:%s: %w", short(commit), stampName, err)
	}
	return st, nil
}

// Follows reports whether the lock table state commit to is a later state
// of the table than commit from, both in the repository of dir (see
// StampAt): moving the ref from one to the other loses no lock and hands
// out no fence again. Why says what to is when it is not. A state
// without a stamp follows another such state that it contains, and no
// stamped one; a stamped state follows one without, as the table's first
// change by a release that stamps it, and a stamped one of the same table
// and a lower generation, or one it contains (a commit made on top of it
// by hand).
func Follows(ctx context.Context, dir, from, to string) (ok bool, why string, err error) {
	if from == to {
		return true, "", nil
	}
	a, err := StampAt(ctx, dir, from)
	if err != nil {
		return false, "", err
	}
	b, err := StampAt(ctx, dir, to)
	if err != nil {
		return false, "", err
	}
	v, why := compare(a, b)
	if v == chained || v == onTop {
		_, err := gitexec.Output(ctx, dir, nil, "merge-base", "--is-ancestor", from, to)
		var ge *gitexec.Error
		switch {
		case err == nil:
			return true, "", nil
		case errors.As(err, &ge) && ge.ExitCode() == 1:
			return false, why, nil
		}
		return false, "", fmt.Errorf("compare %s with %s: %w", short(from), short(to), err)
	}
	return v == later, why, nil
}
