package diffpath

import (
	"errors"
	"strings"
)

var errBadQuote = errors.New("malformed C-style quoted name")

// unquoteC decodes a name quoted the way git's quote_c_style and GNU diff's
// c quoting style write it: s starts with '"', the escapes are \a \b \t \n
// \v \f \r \" \\ and three-digit octal bytes (\303\251 is "é" in UTF-8).
// It returns the decoded name and what follows the closing quote.
func unquoteC(s string) (name, rest string, err error) {
	if len(s) < 2 || s[0] != '"' {
		return "", "", errBadQuote
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			i++
			if i >= len(s) {
				return "", "", errBadQuote
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\', '\'', '?':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", "", errBadQuote
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", "", errBadQuote
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errBadQuote // no closing quote
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }
