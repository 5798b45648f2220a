package scenario

// A small typed reader over yaml.v3 nodes: every value is read through a
// field path, so that every error names the file, the line and the field,
// and every mapping rejects keys it does not know.

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/internal/near"
	"github.com/locksim/locksim/setup"
)

// Error is a bad scenario file: the file, the line (and column) of the
// offending value, the field's path (e.g. "faults[0].group") and what is
// wrong with it.
type Error struct {
	File         string
	Line, Column int
	Field        string
	Msg          string
	// Internal says the error is a bug in the loader (a panic it recovered
	// from), not bad input: the error wraps ErrInternal.
	Internal bool
	// Err is the cause of an error a backend placed in the file (ErrAt):
	// Msg is its text, and errors.Is and errors.As see it (a client that
	// timed out connecting as it started is context.DeadlineExceeded).
	Err error
}

// Errors are the errors of one file, in the order of their lines (at
// most MaxErrors, and then a last one saying how many more there are, or
// that more may follow when reading stopped there: decoder.result): a
// file with several errors is reported whole, rather than one error per
// attempt to load it. A file with one error gives that *Error alone;
// errors.As finds the first of Errors.
type Errors []*Error

// Error is the errors, one a line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap is the errors, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// moreErrors starts the message of the last of Errors when reading stopped
// at MaxErrors: a part was left unread (decoder.truncated), whose errors
// are not known.
const moreErrors = "more errors may follow"

// MaxErrors is the most errors a file's load reports: enough to fix a
// file in one pass, few enough to read (a file of another format would
// give one per line).
const MaxErrors = 10

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// decoder reads one file, a part at a time (part): within a part the
// first error sticks (later reads return zero values, and the caller
// checks err once per section); the next part is read afresh, so that the
// errors of several parts are reported together (errs).
type decoder struct {
	file string
	err  *Error
	// errs are the errors of the parts read before (part), and every
	// unknown field (obj.unknownField); truncated says a part was left
	// unread once MaxErrors were found.
	errs      []*Error
	truncated bool
	// quiet says the part being read failed on a required field that an
	// unknown field misspells (obj.required): its error is the unknown
	// field's, reported already, so the part fails without one of its own.
	// part clears it before and after reading, so parts must not nest (they
	// do not: each is read from the decoder's top level).
	quiet bool
	// scale multiplies every duration read (and every default duration the
	// reader supplies); 0 means 1. See LoadScaled.
	scale float64
	// pendingClients are client entries with workload fields, read once
	// the algorithm's kind is known (clients.go).
	pendingClients []pendingClient
	// names maps every node and client name read so far to "node" or
	// "client" (newName).
	names map[string]string
	// faultObjs are the mappings of the faults read, by index in
	// Scenario.Faults: checkTimeline's errors point at their fields.
	faultObjs []*obj
	// open reads the files the scenario names (a script kind's Lua).
	open opener
	// foreverLine is the line of the algorithm section's wait: forever (0
	// without one), which the error of a client's wait under it names: the
	// client entries' settings are read after the section, which the decoder
	// does not keep.
	foreverLine int
}

// scaled is d multiplied by the decoder's scale, rounded to the
// microsecond (so that a millisecond-whole duration stays whole at scales
// such as 0.2).
//
// A product past the longest time.Duration (about 292 years) is an error
// about the scale: converted, it wrapped around to a negative duration,
// reported as "must be positive".
func (d *decoder) scaled(v time.Duration) time.Duration {
	if d.scale == 0 || d.scale == 1 || v == 0 {
		return v
	}
	us := math.Round(float64(v) * d.scale / float64(time.Microsecond))
	if math.Abs(us) >= float64(math.MaxInt64/int64(time.Microsecond)) {
		d.failf(nil, "", "%v scaled would last past the longest duration (about 292 years)", v)
		return v
	}
	return time.Duration(us) * time.Microsecond
}

// part reads one part of the file (a section, a node, a client entry, a
// fault) with read and keeps its error, the first of the part, in errs;
// it returns whether read added no error at all: neither that one nor an
// unknown field (unknownField), which is left out while the part reads
// on, so that the part built less than the file says (a misspelled
// replicas leaves its node without them). Each part starts without an
// error, so that one bad part does not hide the errors of the next; a part
// that reads what another built (the faults read the nodes and clients)
// is read only when that one succeeded, lest its errors be the other's
// consequences (a fault naming a replica the bad topology never reached).
// Once MaxErrors are found, no part is read.
func (d *decoder) part(read func()) bool {
	if len(d.errs) >= MaxErrors {
		d.truncated = true
		return false
	}
	before := len(d.errs)
	d.quiet = false
	read()
	if d.err != nil {
		d.errs = append(d.errs, d.err)
		d.err = nil
	}
	quiet := d.quiet
	d.quiet = false
	return len(d.errs) == before && !quiet
}

// result is the file's error: nil when it had none, the *Error when one,
// else Errors, in line order (at most MaxErrors, and a note when there
// are more: that more may follow when a part was left unread for the
// limit (part), else how many more were found). With a scale
// (LoadScaled), each error of the file says the durations were scaled, as
// a value may be wrong only scaled (a TTL made fractional); the note,
// about the list and not the file, does not.
func (d *decoder) result() error {
	errs := d.errs
	if d.err != nil {
		errs = append(errs, d.err)
	}
	if d.scale != 0 && d.scale != 1 {
		for _, e := range errs {
			e.Msg += fmt.Sprintf(" (every duration scaled by %g)", d.scale)
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	switch {
	case d.truncated:
		errs = append(errs[:min(len(errs), MaxErrors)], &Error{File: d.file,
			Msg: fmt.Sprintf("%s: the first %d are shown, and reading stopped there", moreErrors, MaxErrors)})
	case len(errs) > MaxErrors:
		// No part was left unread for the limit: the errors past it are the
		// last part's (whose unknown fields do not stop it), and their
		// number is known.
		more := fmt.Sprintf("%d more errors", len(errs)-MaxErrors)
		if len(errs) == MaxErrors+1 {
			more = "1 more error"
		}
		errs = append(errs[:MaxErrors], &Error{File: d.file,
			Msg: fmt.Sprintf("%s: the first %d are shown", more, MaxErrors)})
	}
	return Errors(errs)
}

// unknownField records field f of o, named by key node k, as not one of
// those o takes: an error (msg) of its own, which does not stop the part
// (the field is left out and the mapping read on), so that every unknown
// field of a file is reported; but the part fails (part), and o is marked
// (obj.unknown), its checks of which fields it has left unmade.
func (o *obj) unknownField(k *yaml.Node, f, msg string) {
	o.unknown = true
	o.d.errs = append(o.d.errs, &Error{File: o.d.file, Line: k.Line, Column: k.Column, Field: f, Msg: msg})
}

func (d *decoder) failf(n *yaml.Node, field, format string, args ...any) {
	if d.err != nil {
		return
	}
	e := &Error{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.err = e
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are yaml.v3's parser errors (as against its scanner's):
// it names their lines counted from 0, where it adds 1 to a scanner
// error's, so their lines are one early. Its parser names the line where
// the construct it was reading began (the '{' never closed), or, when
// that is the file's first line, the line where it went wrong.
var parserProblems = []string{
	"did not find expected ',' or '}'", "did not find expected ',' or ']'", "did not find expected key",
	"did not find expected '-' indicator", "did not find expected node content", "did not find expected <document start>",
	"did not find expected <stream-start>", "found undefined tag handle", "found incompatible YAML document",
	"found duplicate %YAML directive", "found duplicate %TAG directive",
}

// parserLine is the line, from 1, of a parser error msg that yaml.v3 named
// at line (counted from 0), at most the file's last line, and what to say
// of it: for a flow collection never closed, whether it opens on that line.
func parserLine(data []byte, line int, msg string) (int, string) {
	lines := bytes.Split(data, []byte("\n"))
	n := len(lines)
	if n > 0 && len(bytes.TrimSpace(lines[n-1])) == 0 {
		n--
	}
	line = min(line+1, max(n, 1))
	text := lines[line-1] // Split gives one line at least
	opens := func(c byte, item string) string {
		if bytes.IndexByte(text, c) >= 0 {
			return fmt.Sprintf("the %c that opens here is not closed, or an %s in it lacks its comma (%s)", c, item, msg)
		}
		return fmt.Sprintf("a %c opened above is not closed, or an %s in it lacks its comma before this line (%s)", c, item, msg)
	}
	switch msg {
	case "did not find expected ',' or '}'":
		return line, opens('{', "entry")
	case "did not find expected ',' or ']'":
		return line, opens('[', "item")
	case "did not find expected key":
		return line, "a mapping here has a line that is not one of its keys: look at this line and those below it for one indented wrong, or a stray character (" + msg + ")"
	case "did not find expected '-' indicator":
		return line, "a list here has a line that is not one of its items: look at this line and those below it for one indented wrong (" + msg + ")"
	}
	return line, msg
}

// syntaxError turns a yaml.v3 parse error into an Error with its line.
// The Error's field already says "yaml": the parser's own "yaml: " prefix
// is dropped, with a line or without (it read "yaml: yaml: ...").
func (d *decoder) syntaxError(err error, data []byte) *Error {
	msg := strings.TrimSpace(err.Error())
	e := &Error{File: d.file, Field: "yaml", Msg: strings.TrimPrefix(msg, "yaml: ")}
	first, _, _ := strings.Cut(msg, "\n")
	if m := yamlLine.FindStringSubmatch(first); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
		if slices.Contains(parserProblems, e.Msg) {
			e.Line, e.Msg = parserLine(data, e.Line, e.Msg)
		}
	} else {
		e.Line = problemLine(data, e.Msg)
	}
	tabAbout := strings.Contains(e.Msg, "tab character")
	if tabAbout || strings.Contains(e.Msg, "cannot start any token") {
		// The parser names a tab in the indentation by the line where it
		// began to read the block it is in (the line before, or a block
		// scalar's first), or not as a tab at all: name the line of the
		// tab, and say what it is.
		if n := tabIndentedLine(data, e.Line); n > 0 && (tabAbout || n == e.Line) {
			e.Line, e.Column = n, 0
			e.Msg = "a tab in the indentation: YAML indents with spaces only"
		}
	}
	return e
}

// tabIndentedLine is the first line at or after line from (1-based) whose
// indentation, the blanks before its first other character, holds a tab;
// 0 when none does.
func tabIndentedLine(data []byte, from int) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 < from {
			continue
		}
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 && len(bytes.TrimSpace(l)) > 0 {
			return i + 1
		}
	}
	return 0
}

// problemLine is the line of the first place in data that the parser's
// error msg, which gives no line, is about (0 when it cannot tell): the
// reader's checks of the bytes (invalid UTF-8, a control character) and
// an alias of an anchor never defined report none.
func problemLine(data []byte, msg string) int {
	lineAt := func(i int) int { return 1 + bytes.Count(data[:i], []byte("\n")) }
	switch {
	case strings.Contains(msg, "UTF-8"):
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return lineAt(i)
			}
			i += size
		}
	case strings.Contains(msg, "control characters"):
		for i, c := range data {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
				return lineAt(i)
			}
		}
	case strings.HasPrefix(msg, "unknown anchor '"):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "unknown anchor '"), "'")
		if i := bytes.Index(data, []byte("*"+name)); name != "" && i >= 0 {
			return lineAt(i)
		}
	}
	return 0
}

// join names key within path. A key that is not printable text (a YAML
// key may hold a line break: "? a\n b") is quoted, so that an error
// naming it stays on its own line, which names the file.
func join(path, key string) string {
	if strings.ContainsFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// obj is one mapping whose keys were checked against the allowed ones.
type obj struct {
	d    *decoder
	path string
	node *yaml.Node
	vals map[string]*yaml.Node
	keys map[string]*yaml.Node
	// unknown says a key was not one of the allowed (unknownField): a check
	// of which fields the mapping has ("give min, max or both") is then
	// left unmade, as the unknown key may be a misspelled one of them and
	// its error says so already.
	unknown bool
	// near are the allowed fields an unknown key misspells (nearest): a
	// required one of them is not also reported missing, since the
	// unknown field's error names it.
	near map[string]bool
}

// mapping reads n as a mapping with only the allowed keys: another is an
// unknown field, which names the allowed ones. A nil or missing n gives
// an empty mapping.
func (d *decoder) mapping(path string, n *yaml.Node, allowed ...string) *obj {
	return d.mappingMsg(path, n, allowed, "unknown field (want one of "+strings.Join(allowed, ", ")+")")
}

// anyMapping reads n as a mapping of any keys: to read the key that says
// which keys the rest may be (an algorithm's or a fault's kind) before
// checking them.
func (d *decoder) anyMapping(path string, n *yaml.Node) *obj {
	return d.mappingMsg(path, n, nil, "")
}

// mappingMsg is mapping whose unknown fields say unknown (allowed nil:
// every key is allowed). An unknown field is reported (unknownField) and
// left out; the part reads on.
func (d *decoder) mappingMsg(path string, n *yaml.Node, allowed []string, unknown string) *obj {
	o := &obj{d: d, path: path, node: n, vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
	n = resolve(n)
	if n == nil || d.err != nil {
		return o
	}
	if n.Kind != yaml.MappingNode {
		d.failf(n, path, "want a mapping, got %s", describe(n))
		return o
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.failf(k, path, "want a field name, got %s", describe(k))
			return o
		}
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			msg := unknown
			if where, ok := misplaced[path+"."+k.Value]; ok {
				msg = withHint(unknown, where)
			} else if guess := near.Field(k.Value, absent(allowed, n)); guess != "" {
				msg = withHint(unknown, "did you mean "+guess+"?")
				if o.near == nil {
					o.near = map[string]bool{}
				}
				o.near[guess] = true
			}
			o.unknownField(k, join(path, k.Value), msg)
			continue
		}
		if _, dup := o.vals[k.Value]; dup {
			d.failf(k, join(path, k.Value), "field given twice")
			return o
		}
		o.vals[k.Value], o.keys[k.Value] = v, k
	}
	return o
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

func (o *obj) has(k string) bool { _, ok := o.vals[k]; return ok }

// get returns k's value node and its field path; nil when absent or after
// an error.
func (o *obj) get(k string) (*yaml.Node, string) {
	if o.d.err != nil {
		return nil, ""
	}
	n := resolve(o.vals[k])
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, join(o.path, k)
	}
	return n, join(o.path, k)
}

// line is the line of k's value, or of the mapping itself when k is absent.
func (o *obj) at(k string) *yaml.Node {
	if n := resolve(o.vals[k]); n != nil {
		return n
	}
	return o.node
}

func (o *obj) scalar(k string) (*yaml.Node, string, bool) {
	n, f := o.get(k)
	if n == nil {
		return nil, f, false
	}
	if n.Kind != yaml.ScalarNode {
		o.d.failf(n, f, "want a single value, got %s", describe(n))
		return nil, f, false
	}
	return n, f, true
}

func (o *obj) str(k, def string) string {
	n, _, ok := o.scalar(k)
	if !ok {
		return def
	}
	return n.Value
}

func (o *obj) required(k string) bool {
	if o.d.err != nil {
		return false
	}
	if n, _ := o.get(k); n == nil {
		if o.near[k] {
			// The misspelling's error, reported already, says it: the
			// part fails without a second one (part).
			o.d.quiet = true
			return false
		}
		if v := resolve(o.vals[k]); v != nil {
			// Present with no value (a bare "clients:"): its own line.
			o.d.failf(v, join(o.path, k), "required field is empty")
			return false
		}
		o.d.failf(o.node, join(o.path, k), "required field is missing")
		return false
	}
	return true
}

func (o *obj) dur(k string, def time.Duration) time.Duration {
	n, f, ok := o.scalar(k)
	if !ok {
		return o.d.scaled(def)
	}
	return o.d.duration(n, f)
}

// msDur is dur for a duration the locks send to Redis (a lease, a TTL, a
// latch's TTL, a WAIT's timeout): Redis counts it in milliseconds, and the
// locks refuse one that is not a whole number of them (lock.Options), so
// the loader refuses it here, at its line, rather than the run failing.
func (o *obj) msDur(k string, def time.Duration) time.Duration {
	v := o.dur(k, def)
	if _, f, ok := o.scalar(k); ok {
		o.d.wholeMs(o.at(k), f, v)
	}
	return v
}

// wholeMs fails field f at n unless v is a whole number of milliseconds.
func (d *decoder) wholeMs(n *yaml.Node, f string, v time.Duration) {
	if d.err == nil && v%time.Millisecond != 0 {
		d.failf(n, f, "%v is not a whole number of milliseconds (Redis counts it in milliseconds)", v)
	}
}

func (d *decoder) duration(n *yaml.Node, f string) time.Duration {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.failf(n, f, "bad duration %q (want a Go duration such as 250ms or 5s)", n.Value)
		return 0
	}
	return d.parsedDuration(n, f, v)
}

// parsedDuration is duration past the parse: v, parsed from n (field f),
// must not be negative nor above setup.MaxDuration, and is scaled. A
// reader whose bad value has a message of its own (lease, which names
// watchdog) parses once and checks the rest here.
func (d *decoder) parsedDuration(n *yaml.Node, f string, v time.Duration) time.Duration {
	if v < 0 {
		d.failf(n, f, "negative duration %v", v)
		return 0
	}
	if v > setup.MaxDuration {
		d.failf(n, f, "duration %v above %v", v, setup.MaxDuration)
		return 0
	}
	return d.scaled(v)
}

// signedDur allows a negative duration (clock jumps backward).
func (o *obj) signedDur(k string) time.Duration {
	n, f, ok := o.scalar(k)
	if !ok {
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		o.d.failf(n, f, "bad duration %q (want a Go duration such as -2s or 250ms)", n.Value)
		return 0
	}
	if v > setup.MaxDuration || v < -setup.MaxDuration {
		o.d.failf(n, f, "duration %v beyond ±%v", v, setup.MaxDuration)
	}
	if v < 0 {
		return -o.d.scaled(-v)
	}
	return o.d.scaled(v)
}

func (o *obj) int(k string, def, lo, hi int64) int64 {
	n, f, ok := o.scalar(k)
	if !ok {
		return def
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || n.Tag != "!!int" {
		o.d.failf(n, f, "want an integer, got %s", scalarShown(n, "!!int"))
		return def
	}
	if v < lo || v > hi {
		o.d.failf(n, f, "%d out of range [%d, %d]", v, lo, hi)
		return def
	}
	return v
}

func (o *obj) uint(k string, def uint64) uint64 {
	n, f, ok := o.scalar(k)
	if !ok {
		return def
	}
	v, err := strconv.ParseUint(n.Value, 0, 64)
	if err != nil || n.Tag != "!!int" {
		o.d.failf(n, f, "want a non-negative integer, got %s", scalarShown(n, "!!int"))
		return def
	}
	return v
}

func (o *obj) float(k string, def, lo, hi float64) float64 {
	n, f, ok := o.scalar(k)
	if !ok {
		return def
	}
	var v float64
	if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		o.d.failf(n, f, "want a number, got %s", scalarShown(n, "!!int", "!!float"))
		return def
	}
	if math.IsNaN(v) || v < lo || v > hi {
		o.d.failf(n, f, "%v out of range [%g, %g]", v, lo, hi)
		return def
	}
	return v
}

func (o *obj) prob(k string, def float64) float64 {
	n, f, ok := o.scalar(k)
	if !ok {
		return def
	}
	var v float64
	if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		o.d.failf(n, f, "want a probability, got %s", scalarShown(n, "!!int", "!!float"))
		return def
	}
	if math.IsNaN(v) || v < 0 || v > 1 {
		o.d.failf(n, f, "probability %v outside [0, 1]", v)
		return def
	}
	return v
}

func (o *obj) bool(k string, def bool) bool {
	n, f, ok := o.scalar(k)
	if !ok {
		return def
	}
	var v bool
	if n.Tag != "!!bool" || n.Decode(&v) != nil {
		o.d.failf(n, f, "want true or false, got %s", scalarShown(n, "!!bool"))
		return def
	}
	return v
}

// oneOf reads a string that must be one of choices.
func (o *obj) oneOf(k, def string, choices ...string) string {
	n, f, ok := o.scalar(k)
	if !ok {
		return def
	}
	for _, c := range choices {
		if n.Value == c {
			return c
		}
	}
	o.d.failf(n, f, "unknown value %q (want one of %s)", n.Value, strings.Join(choices, ", "))
	return def
}

// list reads k as a list; a scalar is not a list.
func (o *obj) list(k string) ([]*yaml.Node, string) {
	n, f := o.get(k)
	if n == nil {
		return nil, f
	}
	if n.Kind != yaml.SequenceNode {
		o.d.failf(n, f, "want a list, got %s", describe(n))
		return nil, f
	}
	return n.Content, f
}

// strs reads a list of non-empty strings.
func (o *obj) strs(k string) []string {
	items, f := o.list(k)
	var out []string
	for i, it := range items {
		it = resolve(it)
		if it.Kind != yaml.ScalarNode || it.Value == "" {
			o.d.failf(it, index(f, i), "want a name, got %s", describe(it))
			return nil
		}
		out = append(out, it.Value)
	}
	return out
}

// dist reads a duration distribution: a duration (fixed), or a mapping
// {kind: fixed|uniform|exp, min, max, mean}.
func (o *obj) dist(k string, def setup.Dist) setup.Dist {
	n, f := o.get(k)
	if n == nil {
		return def
	}
	if n.Kind == yaml.ScalarNode {
		return setup.Fixed(o.d.duration(n, f))
	}
	m := o.d.mapping(f, n, "kind", "min", "max", "mean")
	d := setup.Dist{
		Kind: m.oneOf("kind", "fixed", "fixed", "uniform", "exp"),
		Min:  m.dur("min", 0), Max: m.dur("max", 0), Mean: m.dur("mean", 0),
	}
	if o.d.err == nil {
		if err := d.Validate(); err != nil {
			o.d.failf(n, f, "%v", err)
		}
	}
	return d
}

// misplaced are fields a reader writes where they do not belong, by path
// and key ("." and the key at the root), and where they do: a root seeds
// is not a misspelled seed (one run's seed) but a sweep's.
var misplaced = map[string]string{
	".seeds": "a sweep's seeds are expect.seeds (with a rate expectation) or simulate run's -seeds flag",
	// delay is how long a delayed message waits; how many are delayed is
	// its sibling delay_p.
	"rates.delay.p": "the probability that a message is delayed is rates.delay_p; rates.delay is how long (a duration, or {kind, min, max, mean})",
}

// absent is the allowed fields that mapping n does not give: a misspelled
// key is not one of those it gives already ("hodl" beside "hold").
func absent(allowed []string, n *yaml.Node) []string {
	out := slices.Clone(allowed)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolve(n.Content[i]); k.Kind == yaml.ScalarNode {
			out = slices.DeleteFunc(out, func(a string) bool { return a == k.Value })
		}
	}
	return out
}

// withHint puts hint into an unknown field's message msg, before its
// list of fields ("not a field of X: did you mean near? (its fields:
// ...)"), where a reader looks first.
func withHint(msg, hint string) string {
	if i := strings.Index(msg, " ("); i >= 0 {
		return msg[:i] + ": " + hint + msg[i:]
	}
	return msg + ": " + hint
}

// scalarShown is how an error names a scalar of the wrong type: quoted;
// and for a quoted one whose text, unquoted, would be of a type asked for
// (tags), saying so: on the screen "3" looks like the integer asked for,
// but in quotes it is a string.
func scalarShown(n *yaml.Node, tags ...string) string {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		plain := yaml.Node{Kind: yaml.ScalarNode, Value: n.Value}
		if slices.Contains(tags, plain.ShortTag()) {
			return fmt.Sprintf("the string %q (quoted, a value is a string: remove the quotes)", n.Value)
		}
	}
	return fmt.Sprintf("%q", n.Value)
}
