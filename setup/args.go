package setup

// Command arguments as text, as go-redis writes them on the wire.

import (
	"fmt"
	"strconv"
)

// ArgStrings renders command arguments as go-redis writes them on the
// wire, so that a history names a command's arguments alike in the
// simulation and on real servers.
func ArgStrings(args []any) ([]string, error) {
	out := make([]string, len(args))
	var last *ArgText
	if err := last.Fill(out, args); err != nil {
		return nil, err
	}
	return out, nil
}

// ArgText renders command arguments as ArgStrings does, keeping the text
// of the last int64 argument for the next call: a client sends the same
// lease in milliseconds in most of its requests, and formats it once. Its
// zero value is ready; a nil *ArgText keeps nothing. The text it returns
// is ArgStrings' whatever it kept.
type ArgText struct {
	v  int64
	s  string
	ok bool
}

// format is v in decimal, from the last value kept when it is the same.
func (t *ArgText) format(v int64) string {
	if t == nil {
		return strconv.FormatInt(v, 10)
	}
	if !t.ok || t.v != v {
		*t = ArgText{v: v, s: strconv.FormatInt(v, 10), ok: true}
	}
	return t.s
}

// Fill writes args' text into out (of args' length), as ArgStrings returns
// it.
func (t *ArgText) Fill(out []string, args []any) error {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = v
		case []byte:
			out[i] = string(v)
		case int:
			out[i] = strconv.Itoa(v)
		case int64:
			out[i] = t.format(v)
		case uint64:
			out[i] = strconv.FormatUint(v, 10)
		case int32:
			out[i] = strconv.FormatInt(int64(v), 10)
		case float64:
			out[i] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			if v {
				out[i] = "1"
			} else {
				out[i] = "0"
			}
		default:
			return fmt.Errorf("setup: unsupported argument type %T", a)
		}
	}
	return nil
}
