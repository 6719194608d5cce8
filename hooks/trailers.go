package hooks

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lockgate/lockgate/model/locks"
)

// The trailers the commit-msg hook writes (hooks.trailers): who made the
// commit, and the locks of theirs that cover its paths (docs/formats.md).
const (
	TrailerWorker     = "Lockgate-Worker"
	TrailerWorkerType = "Lockgate-Worker-Type"
	TrailerSession    = "Lockgate-Session"
	TrailerLock       = "Lockgate-Lock"
	// TrailerLockCount replaces the Lockgate-Lock trailers of a commit
	// covered by more than MaxTrailerLocks locks.
	TrailerLockCount = "Lockgate-Lock-Count"
)

// MaxTrailerLocks bounds the Lockgate-Lock trailers of one commit.
const MaxTrailerLocks = 32

// Trailers are the attestation lines ("Token: value") for a commit by me
// under held (the committer's locks covering its paths, sorted by key).
// A value git could not keep on one line as it is — a control character,
// invalid UTF-8, or white space at either end, which git trims — is an
// error: no attestation is better than a garbled one.
func Trailers(me locks.Owner, held []heldLock) ([]string, error) {
	lines := make([]string, 0, 3+min(len(held), MaxTrailerLocks))
	add := func(token, value string) error {
		if !trailerValue(value) {
			return fmt.Errorf("cannot write the %s trailer: %q is not a single line of printable text", token, value)
		}
		lines = append(lines, token+": "+value)
		return nil
	}
	if err := add(TrailerWorker, me.Holder); err != nil {
		return nil, err
	}
	if me.HolderType != "" {
		if err := add(TrailerWorkerType, me.HolderType); err != nil {
			return nil, err
		}
	}
	if me.Session != "" {
		if err := add(TrailerSession, me.Session); err != nil {
			return nil, err
		}
	}
	if len(held) > MaxTrailerLocks {
		lines = append(lines, TrailerLockCount+": "+strconv.Itoa(len(held)))
		return lines, nil
	}
	for _, l := range held {
		if !trailerValue(l.Key) {
			return nil, fmt.Errorf("cannot write the %s trailer: the key %q is not a single line of printable text", TrailerLock, l.Key)
		}
		lines = append(lines, TrailerLock+": "+l.Key+" fence="+strconv.FormatUint(l.Fence, 10))
	}
	return lines, nil
}

func trailerValue(s string) bool {
	if s == "" || !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// cutLine follows the comment string on the scissors line of `git commit
// -v`, below which git ignores the message.
const cutLine = " ------------------------ >8 ------------------------"

// WithTrailers returns msg with lines as the last trailers of its trailer
// block and no other lockgate trailer there (the ones an amended commit
// carries). It follows git's reading of a commit message, so that `git
// interpret-trailers --parse` returns them: the first paragraph is the
// subject, the trailer block is the last paragraph when git takes it for
// one (else a new paragraph is started), and trailing comment lines and
// whatever follows the scissors line of `commit -v` are left where they
// are. A message with no text but comments is returned as it is: git
// refuses it as empty, and trailers must not make it a commit. Comment
// lines begin with comment (core.commentChar, "#" by default).
func WithTrailers(msg string, lines []string, comment string) string {
	all := splitLines(msg)
	end := contentEnd(all, comment)
	body := append([]string(nil), all[:end]...)
	if start, ok := trailerBlock(body, comment); ok {
		kept := body[:start]
		ours := false
		for _, l := range body[start:] {
			switch {
			case isSpace(l) && ours:
				continue // continuation of a lockgate trailer
			case isLockgateTrailer(l):
				ours = true
				continue
			}
			ours = false
			kept = append(kept, l)
		}
		body = kept
	}
	for len(body) > 0 && (blank(body[len(body)-1]) || strings.HasPrefix(body[len(body)-1], comment)) {
		body = body[:len(body)-1]
	}
	empty := true
	for _, l := range body {
		if !blank(l) && !strings.HasPrefix(l, comment) {
			empty = false
			break
		}
	}
	if empty {
		return msg
	}
	var b strings.Builder
	b.Grow(len(msg) + 64*len(lines))
	for _, l := range body {
		b.WriteString(l)
	}
	if !strings.HasSuffix(body[len(body)-1], "\n") {
		b.WriteByte('\n')
	}
	if _, ok := trailerBlock(body, comment); !ok {
		b.WriteByte('\n')
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, l := range all[end:] {
		b.WriteString(l)
	}
	return b.String()
}

// splitLines splits s after each "\n"; the last line may lack it.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// blank is git's is_blank_line: nothing but white space.
func blank(l string) bool { return strings.TrimSpace(l) == "" }

func isSpace(l string) bool { return l != "" && (l[0] == ' ' || l[0] == '\t') }

// contentEnd is the index of the first line git ignores when it looks for
// trailers (ignore_non_trailer): the scissors line and all after it, and
// the run of comment and empty lines before that.
func contentEnd(lines []string, comment string) int {
	cut := len(lines)
	for i, l := range lines {
		if strings.TrimSuffix(l, "\n") == comment+cutLine {
			cut = i
			break
		}
	}
	end := cut
	for end > 0 && (strings.HasPrefix(lines[end-1], comment) || lines[end-1] == "\n") {
		end--
	}
	return end
}

// trailerBlock finds, as git's find_trailer_block_start does, the first
// line of lines' trailer block: the last paragraph after the subject's,
// when all its lines are trailers, or when one is git-generated
// (Signed-off-by, cherry-pick -x) and a quarter of them are trailers.
// Comment lines count for nothing.
func trailerBlock(lines []string, comment string) (int, bool) {
	title := 0
	for title < len(lines) {
		if !strings.HasPrefix(lines[title], comment) && blank(lines[title]) {
			break
		}
		title++
	}
	onlySpaces, recognized := true, false
	trailers, nonTrailers, cont := 0, 0, 0
	for i := len(lines) - 1; i >= title; i-- {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, comment):
			nonTrailers += cont
			cont = 0
			continue
		case blank(l):
			if onlySpaces {
				continue
			}
			nonTrailers += cont
			if recognized && trailers*3 >= nonTrailers || trailers > 0 && nonTrailers == 0 {
				return i + 1, true
			}
			return 0, false
		}
		onlySpaces = false
		switch {
		case strings.HasPrefix(l, "Signed-off-by: ") || strings.HasPrefix(l, "(cherry picked from commit "):
			trailers++
			cont = 0
			recognized = true
		case separator(l) >= 1 && !isSpace(l):
			trailers++
			cont = 0
		case isSpace(l):
			cont++
		default:
			nonTrailers += 1 + cont
			cont = 0
		}
	}
	return 0, false
}

// separator is git's find_separator with the default separator ':': the
// position of the ':' ending a trailer's token, or -1.
func separator(l string) int {
	ws := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == ':':
			return i
		case !ws && (c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
		case i > 0 && (c == ' ' || c == '\t'):
			ws = true
		default:
			return -1
		}
	}
	return -1
}

// isLockgateTrailer reports a trailer line whose token is one of
// lockgate's (Lockgate-*, any case).
func isLockgateTrailer(l string) bool {
	i := separator(l)
	if i < 1 || isSpace(l) {
		return false
	}
	tok := strings.TrimSpace(l[:i])
	return len(tok) > len("Lockgate-") && strings.EqualFold(tok[:len("Lockgate-")], "Lockgate-")
}

// lockgateTrailers returns the lockgate trailers (token, value) of msg's
// final trailer block, as git reads it; false when it has none.
func lockgateTrailers(msg, comment string) ([][2]string, bool) {
	lines := splitLines(msg)
	body := lines[:contentEnd(lines, comment)]
	start, ok := trailerBlock(body, comment)
	if !ok {
		return nil, false
	}
	var out [][2]string
	for _, l := range body[start:] {
		if !isLockgateTrailer(l) {
			continue
		}
		i := separator(l)
		out = append(out, [2]string{strings.TrimSpace(l[:i]), strings.TrimSpace(l[i+1:])})
	}
	return out, true
}

// parseTrailers reads the lockgate trailers of msg's trailer block: the
// worker, the session and the locks (key and fence) named.
func parseTrailers(msg, comment string) (worker, session string, held []heldLock) {
	ts, _ := lockgateTrailers(msg, comment)
	for _, t := range ts {
		tok, v := t[0], t[1]
		switch {
		case strings.EqualFold(tok, TrailerWorker):
			worker = v
		case strings.EqualFold(tok, TrailerSession):
			session = v
		case strings.EqualFold(tok, TrailerLock):
			key, fence, ok := cutLast(v, " fence=")
			n, err := strconv.ParseUint(fence, 10, 64)
			if ok && err == nil && key != "" {
				held = append(held, heldLock{Key: key, Fence: n})
			}
		}
	}
	return worker, session, held
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// CommitAuthor is the identity the lockgate trailers of a commit message
// name: its Lockgate-Worker, Lockgate-Worker-Type and Lockgate-Session,
// read from the final trailer block only, as git reads trailers. The
// message comes from whoever made the commit: ok is false — judge the
// commit as its pusher — unless the block holds exactly one worker and one
// worker type, at most one session, and together they are a worker
// lockgate would have written (CheckOwner).
func CommitAuthor(msg, comment string) (me locks.Owner, ok bool) {
	if len(msg) > MaxCommitMsgBytes {
		return locks.Owner{}, false
	}
	if comment == "" {
		comment = "#"
	}
	ts, found := lockgateTrailers(msg, comment)
	if !found {
		return locks.Owner{}, false
	}
	var workers, types, sessions int
	for _, t := range ts {
		tok, v := t[0], t[1]
		switch {
		case strings.EqualFold(tok, TrailerWorker):
			workers++
			me.Holder = v
		case strings.EqualFold(tok, TrailerWorkerType):
			types++
			me.HolderType = v
		case strings.EqualFold(tok, TrailerSession):
			sessions++
			me.Session = v
		}
	}
	if workers != 1 || types != 1 || sessions > 1 || CheckOwner(me) != nil {
		return locks.Owner{}, false
	}
	return me, true
}
