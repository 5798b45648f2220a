package sim

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"

	"github.com/alicebob/miniredis/v2/server"
)

// parseReply parses the one reply miniredis wrote into b, giving exactly
// what server.ParseReply gives (Simple for a status, int, string, nil,
// []any, an error for an error reply), but reading b in place: ParseReply
// reads through a bufio.Reader and allocates each line and each bulk string
// twice, for every command a node runs. Anything but the well-formed RESP2
// replies miniredis writes (a RESP3 type, a malformed line) is handed to
// ParseReply itself, so that its result, error included, is ParseReply's.
func parseReply(b []byte) (any, error) {
	v, _, err := parseOne(b)
	if err == errNotFast {
		return server.ParseReply(bufio.NewReader(bytes.NewReader(b)))
	}
	return v, err
}

// errNotFast sends a reply to server.ParseReply.
var errNotFast = errors.New("sim: reply left to server.ParseReply")

// parseOne parses the reply at the start of b and returns the rest.
func parseOne(b []byte) (any, []byte, error) {
	i := bytes.IndexByte(b, '\n')
	if i < 2 || b[i-1] != '\r' {
		return nil, nil, errNotFast
	}
	kind, line, rest := b[0], b[1:i-1], b[i+1:]
	switch kind {
	case '+':
		return server.Simple(line), rest, nil
	case '-':
		return nil, nil, errors.New(string(line))
	case ':':
		if len(line) == 0 {
			return 0, rest, nil
		}
	case '$', '*':
	default:
		return nil, nil, errNotFast
	}
	n, err := strconv.Atoi(string(line)) // (no copy: the conversion does not escape)
	switch {
	case err != nil:
		return nil, nil, errNotFast
	case kind == ':':
		return n, rest, nil
	case n < 0: // a nil bulk string or array
		return nil, rest, nil
	case kind == '$':
		if len(rest) < n+2 {
			return nil, nil, errNotFast
		}
		return string(rest[:n]), rest[n+2:], nil
	}
	var fields []any
	for ; n > 0; n-- {
		v, r, err := parseOne(rest)
		if err != nil {
			return nil, nil, err
		}
		fields, rest = append(fields, v), r
	}
	return fields, rest, nil
}
