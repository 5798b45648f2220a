package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ReplyError is an error reply from the server.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// Do sends one command to addr on a fresh connection, within timeout, and
// returns the reply (see Server.Do). It speaks RESP2 and needs no client
// library, so it leaves no goroutine behind.
func Do(addr string, timeout time.Duration, args ...string) (any, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(encodeCommand(args)); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(c))
}

// DoAll sends commands one after another on one connection (WAIT, for
// one, counts the acknowledgements of its own connection's writes) and
// returns their replies; an error reply is returned in place, as a
// ReplyError value. err is for the connection.
func DoAll(addr string, timeout time.Duration, cmds ...[]string) ([]any, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	r := bufio.NewReader(c)
	out := make([]any, len(cmds))
	for i, args := range cmds {
		if _, err := c.Write(encodeCommand(args)); err != nil {
			return out, err
		}
		v, err := readReply(r)
		var re ReplyError
		if errors.As(err, &re) {
			v, err = re, nil
		}
		if err != nil {
			return out, err
		}
		out[i] = v
	}
	return out, nil
}

// encodeCommand is args as a RESP array of bulk strings.
func encodeCommand(args []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return []byte(b.String())
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), nil
}

// readReply reads one RESP2 reply.
func readReply(r *bufio.Reader) (any, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if line == "" {
		return nil, errors.New("redistest: empty reply line")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return nil, ReplyError(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return nil, fmt.Errorf("redistest: bad bulk length %q", line)
		}
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return nil, fmt.Errorf("redistest: bad array length %q", line)
		}
		if n < 0 {
			return []any(nil), nil
		}
		out := make([]any, n)
		for i := range out {
			v, err := readReply(r)
			var re ReplyError
			if err != nil && !errors.As(err, &re) {
				return nil, err
			}
			if err != nil {
				v = err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("redistest: unexpected reply %q", line)
}

// readCommand reads one client request: a RESP array of bulk strings, or an
// inline command (a line of words). It returns the arguments and the raw
// bytes, to forward unchanged.
func readCommand(r *bufio.Reader) (args []string, raw []byte, err error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, nil, err
	}
	raw = []byte(line)
	head := strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(head, "*") {
		return strings.Fields(head), raw, nil
	}
	n, err := strconv.Atoi(head[1:])
	if err != nil {
		return nil, nil, fmt.Errorf("redistest: bad request array %q", head)
	}
	for range max(n, 0) {
		l, err := r.ReadString('\n')
		if err != nil {
			return nil, nil, err
		}
		raw = append(raw, l...)
		h := strings.TrimRight(l, "\r\n")
		if !strings.HasPrefix(h, "$") {
			return nil, nil, fmt.Errorf("redistest: bad request argument header %q", h)
		}
		size, err := strconv.Atoi(h[1:])
		if err != nil || size < 0 {
			return nil, nil, fmt.Errorf("redistest: bad request argument header %q", h)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, nil, err
		}
		raw = append(raw, buf...)
		args = append(args, string(buf[:size]))
	}
	return args, raw, nil
}
