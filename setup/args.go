package setup

// Command arguments as text, as go-redis writes them on the wire.

import (
	"fmt"
	"strconv"
	"unsafe"
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
// of the last few int64 arguments for the next calls: a client sends the
// same lease, wait and TTLs in milliseconds in most of its requests (a fair
// lock's try sends three numbers, two of them the same every time), and
// formats each once. Its zero value is ready; a nil *ArgText keeps
// nothing. The text it returns is ArgStrings' whatever it kept. It must
// not be copied once used, nor used by two goroutines at once: the texts
// it gave share its slab of digits, which a second writer would write
// over.
type ArgText struct {
	ints [argTextInts]intText
	// next is the entry of ints the next new value replaces.
	next int
	// digits is what the next new value's text is written into: the texts
	// share slabs of digitsSlab bytes, one allocation for many values
	// (a fair lock's every try sends the wall clock, a new number each
	// time). No byte of it is written twice, so the texts never change.
	digits []byte
}

// digitsSlab is the size of ArgText's slabs of digits.
const digitsSlab = 512

// argTextInts is how many numbers an ArgText keeps.
const argTextInts = 4

// intText is an int64 and its text.
type intText struct {
	v  int64
	s  string
	ok bool
}

// Int is v in decimal, from the values kept when it is one of them.
func (t *ArgText) Int(v int64) string {
	if t == nil {
		return strconv.FormatInt(v, 10)
	}
	for i := range t.ints {
		if e := &t.ints[i]; e.ok && e.v == v {
			return e.s
		}
	}
	if len(t.digits) < 20 { // the longest int64, -9223372036854775808
		t.digits = make([]byte, digitsSlab)
	}
	b := strconv.AppendInt(t.digits[:0], v, 10)
	t.digits = t.digits[len(b):]
	e := &t.ints[t.next]
	*e = intText{v: v, s: unsafe.String(&b[0], len(b)), ok: true}
	t.next = (t.next + 1) % argTextInts
	return e.s
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
			out[i] = t.Int(v)
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
