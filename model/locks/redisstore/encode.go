package redisstore

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lockgate/lockgate/model/locks"
)

// appendLockJSON appends rec's JSON to b: the bytes json.Marshal makes of a
// locks.Lock (field order, omitempty, escaping, time format), without
// reflection, since every acquisition and refresh encodes a record.
// FuzzAppendLockJSON holds it to json.Marshal.
func appendLockJSON(b []byte, rec *locks.Lock) ([]byte, error) {
	var err error
	b = append(b, `{"key":`...)
	b = appendJSONString(b, rec.Key)
	b = append(b, `,"holder":`...)
	b = appendJSONString(b, rec.Holder)
	b = append(b, `,"holder_type":`...)
	b = appendJSONString(b, rec.HolderType)
	b = append(b, `,"session":`...)
	b = appendJSONString(b, rec.Session)
	if rec.Action != "" {
		b = append(b, `,"action":`...)
		b = appendJSONString(b, rec.Action)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(rec.PID), 10)
	b = append(b, `,"host":`...)
	b = appendJSONString(b, rec.Host)
	b = append(b, `,"created_at":`...)
	if b, err = appendJSONTime(b, rec.CreatedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"expires_at":`...)
	if b, err = appendJSONTime(b, rec.ExpiresAt); err != nil {
		return nil, err
	}
	if rec.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, rec.Reason)
	}
	if rec.TaskID != "" {
		b = append(b, `,"task_id":`...)
		b = appendJSONString(b, rec.TaskID)
	}
	if rec.TaskAcquired != nil {
		b = append(b, `,"task_acquired":`...)
		if b, err = appendJSONTime(b, *rec.TaskAcquired); err != nil {
			return nil, err
		}
	}
	if rec.TaskExpires != nil {
		b = append(b, `,"task_expires":`...)
		if b, err = appendJSONTime(b, *rec.TaskExpires); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"token":`...)
	b = appendJSONString(b, rec.Token)
	b = append(b, `,"fence":`...)
	b = strconv.AppendUint(b, rec.Fence, 10)
	if rec.RequestID != "" {
		b = append(b, `,"request_id":`...)
		b = appendJSONString(b, rec.RequestID)
	}
	if rec.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendJSONString(b, rec.TraceID)
	}
	if rec.EventID != "" {
		b = append(b, `,"event_id":`...)
		b = appendJSONString(b, rec.EventID)
	}
	return append(b, '}'), nil
}

// appendJSONTime appends t as time.Time's MarshalJSON does, with its error
// for a time RFC 3339 cannot express.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// appendJSONString appends s quoted as encoding/json quotes strings: HTML
// characters, control characters, U+2028 and U+2029 escaped, invalid UTF-8
// replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
