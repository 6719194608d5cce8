package diffpath

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// LogFormat is the --format LogReader reads, with git log's -z: a marker
// byte, then the commit's name, committer time, author time, parents and
// raw message, NUL between them.
const LogFormat = "%x01%H%x00%ct%x00%at%x00%P%x00%B"

// LogCommit is one commit as LogReader reads it.
type LogCommit struct {
	SHA       string
	Committed time.Time
	Authored  time.Time
	Parents   []string
	Message   string
	Changes   []Change
}

// LogReader reads the output of one git log that gives, for each commit,
// what a hook judges — its changes and its message:
//
//	git log -z --format=<LogFormat> --name-status -M --cc ARGS
//
// Each commit's record is the format's fields, then git's NUL ending the
// message, then, when git shows a diff, a newline and the commit's
// entries in the -z name-status form (a merge whose combined diff is empty
// prints a lone NUL instead). A message is a NUL-ended field, so it may
// hold the marker byte; a path is read whole after its status, so it may
// too. Memory is bounded by one commit.
type LogReader struct {
	t   TreeReader // its field reading and entry parsing
	err error
}

// NewLogReader returns a LogReader reading r.
func NewLogReader(r io.Reader) *LogReader {
	return &LogReader{t: TreeReader{br: bufio.NewReaderSize(r, 64<<10)}}
}

func (l *LogReader) syntax(msg string) error {
	return &SyntaxError{Format: "log", Pos: l.t.off, Msg: msg}
}

// Next returns the next commit, io.EOF after the last, a *SyntaxError (or a
// wrapped *PathError) for a malformed stream; after an error it keeps
// returning it.
func (l *LogReader) Next() (*LogCommit, error) {
	if l.err != nil {
		return nil, l.err
	}
	c, err := l.next()
	if err != nil {
		l.err = err
		return nil, err
	}
	return c, nil
}

func (l *LogReader) next() (*LogCommit, error) {
	b, err := l.t.br.ReadByte()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, err
	}
	l.t.off++
	if b != 1 {
		return nil, l.syntax("want a commit record (was git log run with --format=" + LogFormat + " -z?)")
	}
	var f [5]string
	for i := range f {
		v, err := l.t.field()
		if errors.Is(err, io.EOF) {
			return nil, l.syntax("truncated commit record")
		}
		if err != nil {
			return nil, err
		}
		f[i] = string(v)
	}
	if !isFullObjectName([]byte(f[0])) {
		return nil, l.syntax("invalid commit name " + quoteField([]byte(f[0])))
	}
	c := &LogCommit{SHA: f[0], Message: f[4]}
	for i, t := range []*time.Time{&c.Committed, &c.Authored} {
		secs, err := strconv.ParseInt(f[1+i], 10, 64)
		if err != nil {
			return nil, l.syntax("invalid time " + quoteField([]byte(f[1+i])) + " of commit " + c.SHA)
		}
		*t = time.Unix(secs, 0).UTC()
	}
	c.Parents = strings.Fields(f[3])
	for _, p := range c.Parents {
		if !isFullObjectName([]byte(p)) {
			return nil, l.syntax("invalid parent " + quoteField([]byte(p)) + " of commit " + c.SHA)
		}
	}
	for {
		b, err := l.t.br.ReadByte()
		switch {
		case errors.Is(err, io.EOF):
			return c, nil
		case err != nil:
			return nil, err
		case b == 1:
			if err := l.t.br.UnreadByte(); err != nil {
				return nil, err
			}
			return c, nil
		}
		l.t.off++
		if b == '\n' || b == 0 {
			continue // before the entries; a merge's empty combined diff
		}
		if err := l.t.br.UnreadByte(); err != nil {
			return nil, err
		}
		l.t.off--
		tok, err := l.t.field()
		if errors.Is(err, io.EOF) {
			return nil, l.syntax("truncated entry")
		}
		if err != nil {
			return nil, err
		}
		if c.Changes, err = l.t.entry(tok, true, c.Changes); err != nil {
			return nil, err
		}
	}
}
