package history

// Reading a history back from JSON lines (WriteJSONL's format, or the
// same records written by a user's own system), validating every line:
// the judges trust what they are given, so whatever they would misread is
// refused here, naming the line and the field.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/internal/near"
)

// MaxLineBytes is the longest line ScanJSONL reads. A truth record copies
// its key's whole collection, so the queue of a fair lock with many
// waiters of long client and owner names is a line of hundreds of
// kilobytes (2,000 waiters of 500-byte names: about 1 MB), and what run
// -out writes, check must read back: 64 MiB is a queue of 2,000 waiters
// of names of 30,000 bytes. Decoding a line holds several times its
// text (a 150 MB line took 1.4 GB), so the bound is on the line, not
// only on the file.
const MaxLineBytes = 64 << 20

// maxLine is MaxLineBytes, lowered by the tests.
var maxLine = MaxLineBytes

// LineError is a bad line of a history file, or a history that cannot be
// judged: the file, the line (1-based; 0 for the file as a whole), the
// record's field in its JSON name ("" for the line as a whole) and what is
// wrong.
type LineError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *LineError) Error() string {
	switch {
	case e.Line == 0:
		return e.File + ": " + e.Msg
	case e.Field == "":
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// outcomes are the outcomes of op and req records.
var outcomes = []Outcome{OutcomeOK, OutcomeFail, OutcomeError, OutcomeUnknown}

// kinds are the record kinds.
var kinds = []Kind{KindOp, KindReq, KindFault, KindTruth, KindNode, KindClient}

// wireRecord is a Record as a line holds it: Record's fields but seq and
// t, which are pointers here to tell a field left out from a zero, and
// which, at a shallower depth, take the JSON names "seq" and "t" from
// Record's.
type wireRecord struct {
	Record
	Seq *int   `json:"seq"`
	T   *int64 `json:"t"`
}

// recordFieldNames are Record's JSON names in its field order, for the
// error of an unknown field (recordFields lists them) and its guess: read
// from Record's tags, so that they name every field a line may have, a
// field added to Record included.
var recordFieldNames = func() []string {
	t := reflect.TypeFor[Record]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}()

var recordFields = strings.Join(recordFieldNames, ", ")

// ScanJSONL reads a history of JSON lines from r, file naming it in
// errors, and calls fn with each record in order; it returns how many
// there were. Every line is validated (validate) before fn sees it, and
// across lines: seq on every record or on none (none: each is numbered by
// its place), no seq twice, t never below the previous record's (a
// history is in time order). Blank lines are skipped. A history larger
// than maxRecords records (its Weight: collection members count too, and
// its values before each line is decoded: tooLarge), a line longer than
// MaxLineBytes, or a history without an op record is an error too. Errors
// are *LineError, naming the line and the field; an error of r or of fn
// is returned as it is. Only the seqs seen are kept, so a caller that
// keeps nothing reads a file of any length in bounded memory.
func ScanJSONL(r io.Reader, file string, maxRecords int, fn func(Record) error) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	seqLine := map[int]int{} // seq -> the line that has it
	withSeq, n, ops, line, entries, vals := -1, 0, 0, 0, 0, 0
	var prevT int64
	prevLine := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		bad := func(field, format string, a ...any) error {
			return &LineError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
		}
		if msg := tooLarge(b, n, &vals, maxRecords); msg != "" {
			return n, bad("", "%s", msg)
		}
		w, err := decodeLine(b)
		if err != nil {
			err.File, err.Line = file, line
			return n, err
		}
		if field, msg := validate(w); msg != "" {
			return n, bad(field, "%s", msg)
		}
		entries += w.Record.Entries()
		if field, msg := overweight(w, n+1, entries, maxRecords); msg != "" {
			return n, bad(field, "%s", msg)
		}
		switch has := w.Seq != nil; {
		case withSeq == -1 && has:
			withSeq = 1
		case withSeq == -1:
			withSeq = 0
		case (withSeq == 1) != has:
			return n, bad("seq", "given on some records and not on others (give it on every record, or on none to number them in order)")
		}
		seq := n
		if w.Seq != nil {
			seq = *w.Seq
			if seq < 0 {
				return n, bad("seq", "%d is negative", seq)
			}
			if l, dup := seqLine[seq]; dup {
				return n, bad("seq", "%d again (line %d has it): every record has its own", seq, l)
			}
			seqLine[seq] = line
		}
		if *w.T < prevT {
			return n, bad("t", "%d (%v) is before the previous record's %d (%v, line %d): a history lists its records in time order of t (an op's call)",
				*w.T, time.Duration(*w.T), prevT, time.Duration(prevT), prevLine)
		}
		prevT, prevLine = *w.T, line
		if w.Kind == KindOp {
			ops++
		}
		n++
		if err := fn(w.record(seq)); err != nil {
			return n, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return n, &LineError{File: file, Line: line + 1, Msg: fmt.Sprintf("longer than %d bytes, the most a record's line may have", maxLine)}
		}
		return n, err
	}
	if ops == 0 {
		return n, &LineError{File: file, Msg: fmt.Sprintf("%d records and no op record (kind \"op\"): a history to judge holds the lock operations", n)}
	}
	return n, nil
}

// MaxNameBytes is the longest name a record may give a client, node,
// lock, key, operation or holder (an op record's args): the checkers quote
// names in every finding that names them, and a finding about two holders
// quotes both, so that fifteen holders of 31 MiB names asked for 13 GB of
// findings and ended the process. A scenario's owners are held to it too,
// so that check reads every history run writes.
const MaxNameBytes = 64 << 10

// validateNames refuses a name longer than MaxNameBytes.
func validateNames(w *wireRecord) (field, msg string) {
	for _, f := range []struct{ field, v string }{{"client", w.Client}, {"node", w.Node}, {"lock", w.Lock}, {"key", w.Key}, {"op", w.Op}} {
		if len(f.v) > MaxNameBytes {
			return f.field, fmt.Sprintf("%d bytes: a name is at most %d (history.MaxNameBytes), since findings quote it", len(f.v), MaxNameBytes)
		}
	}
	if w.Kind == KindOp {
		for i, a := range w.Args {
			if len(a) > MaxNameBytes {
				return fmt.Sprintf("args[%d]", i), fmt.Sprintf("%d bytes: an op record's args name its holder, at most %d bytes (history.MaxNameBytes), since findings quote it", len(a), MaxNameBytes)
			}
		}
	}
	return "", ""
}

// ValuesPerRecord bounds the values a history file may hold, per record
// of maxRecords: ScanJSONL counts a line's values (its commas: a record's
// fields, the elements of its arrays, the members of its collections)
// before it decodes it, because a decoded value costs several times its
// text (a line of 33 million empty args, 99 MB, took the decoder past
// 1.6 GB), so that the file's size bounds little. A history a run records
// holds a record's fields and a request's arguments, and one value for
// each collection member, 16 of which weigh as a record: 12 to 19 values
// a record of its weight (measured on histories of a fair lock, a queue
// of 1,000 waiters included, and of a SET NX lock), and 64 leaves a
// lock's scripts of many arguments room.
const ValuesPerRecord = 64

// maxLineValues bounds the values of one line, before it is decoded: a
// collection of four million members in one record, far more than any
// lock's key holds, and what decoding one line may hold at once.
const maxLineValues = 4 << 20

// tooLarge returns the refusal of line b, before it is decoded, when the
// history of n records and vals values so far (vals counts b's in) would
// grow past what may be held: more than maxRecords records, a line of more
// than maxLineValues values, or more than ValuesPerRecord×maxRecords in
// all; "" when it would not. (A comma inside a string counts too: a bound
// need not be exact.)
func tooLarge(b []byte, n int, vals *int, maxRecords int) string {
	if n == maxRecords {
		return fmt.Sprintf("more than %d records, the most a history may have (it is held in memory and checked whole, as a run's is)", maxRecords)
	}
	v := bytes.Count(b, []byte{','}) + 1
	*vals += v
	switch {
	case v > maxLineValues:
		return fmt.Sprintf("%d values in one record, more than the %d one may hold (it is decoded whole before it is judged)", v, maxLineValues)
	case *vals > ValuesPerRecord*maxRecords:
		return fmt.Sprintf("%d values by this line, more than the %d a history of at most %d records may hold (%d a record: fields, array elements, collection members; it is held in memory and checked whole, as a run's is)",
			*vals, ValuesPerRecord*maxRecords, maxRecords, ValuesPerRecord)
	}
	return ""
}

// overweight returns the field and the refusal of w, the record that
// brings a history to n records holding entries collection members, when
// that weighs more than maxRecords records (Weight); "" when it does not.
// The field is w's members (items, fields) or its value, if it weighs.
// (More records than maxRecords are refused before the line is decoded.)
func overweight(w *wireRecord, n, entries, maxRecords int) (field, msg string) {
	if Weight(n, entries) <= maxRecords {
		return "", ""
	}
	switch {
	case len(w.Items) > 0:
		field = "items"
	case len(w.Fields) > 0:
		field = "fields"
	case len(w.Value) >= ValueBytesPerEntry:
		field = "value"
	}
	return field, fmt.Sprintf("%d records holding %d collection members by this line weigh more than %d records, the most a history may (%d members, a hash's fields, a list's items or a sorted set's members, weigh as one record, and %d bytes of a value as a member; it is held in memory and checked whole, as a run's is)",
		n, entries, maxRecords, EntriesPerRecord, ValueBytesPerEntry)
}

// ReadJSONL reads and validates a history of JSON lines (ScanJSONL) and
// returns its records.
func ReadJSONL(r io.Reader, file string, maxRecords int) ([]Record, error) {
	var recs []Record
	_, err := ScanJSONL(r, file, maxRecords, func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// record is w as a Record numbered seq.
func (w *wireRecord) record(seq int) Record {
	r := w.Record
	r.Seq, r.T = seq, *w.T
	return r
}

// decodeLine decodes one line, a JSON object of Record's fields; the error
// names the field that is unknown or of the wrong type.
func decodeLine(b []byte) (*wireRecord, *LineError) {
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return nil, &LineError{Msg: fmt.Sprintf("not one JSON object: %v", err)}
	}
	if k := duplicateKey(b); k != "" {
		return nil, &LineError{Field: k, Msg: "given twice in the record (a record names each field once; JSON would keep the last silently)"}
	}
	var w wireRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&w)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return &w, nil
	case errors.As(err, &te) && te.Field == "":
		return nil, &LineError{Msg: fmt.Sprintf("a JSON %s, not an object (a record is one object a line)", te.Value)}
	case errors.As(err, &te):
		// The path of the field, from the line's object: a field of the
		// embedded Record is named through it ("Record.args").
		field, _, _ := strings.Cut(strings.TrimPrefix(te.Field, "Record."), ".")
		return nil, &LineError{Field: field, Msg: fmt.Sprintf("want %s, got %s", wantOf(field), te.Value)}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		msg := "unknown field"
		// The guess is among the fields the line does not give already.
		var given map[string]json.RawMessage
		_ = json.Unmarshal(b, &given) // valid JSON, checked above
		absent := slices.DeleteFunc(slices.Clone(recordFieldNames), func(f string) bool { _, ok := given[f]; return ok })
		if guess := near.Field(name, absent); guess != "" {
			msg += ": did you mean " + guess + "?"
		}
		return nil, &LineError{Field: name, Msg: msg + " (a record's fields: " + recordFields + ")"}
	}
	return nil, &LineError{Msg: err.Error()}
}

// duplicateKey is the first key that the JSON object b (valid JSON) gives
// twice at its top level, "" when none (or when b is not an object):
// encoding/json keeps the last of two silently, so that a record read
// "t" from one and "end" checked against the other.
func duplicateKey(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var seen []string // a record has at most a score of fields
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			return ""
		}
		if slices.Contains(seen, k) {
			return k
		}
		seen = append(seen, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}

// wantOf says what a field holds, for a value of the wrong type.
func wantOf(field string) string {
	switch field {
	case "t", "end", "answered":
		return "a whole number of nanoseconds since the history's start"
	case "applied":
		return "an array of whole numbers of nanoseconds"
	case "seq":
		return "a whole number"
	case "args", "items":
		return "an array of strings"
	case "fields":
		return "an object of strings"
	case "gone":
		return "true or false"
	}
	return "a string"
}

// validate checks one record's fields against its kind (checker/doc.go
// states what each kind's fields mean): the field at fault and what is
// wrong, or "" and "".
func validate(w *wireRecord) (field, msg string) {
	switch {
	case w.Kind == "":
		return "kind", fmt.Sprintf("missing (one of %s)", kindList())
	case !slices.Contains(kinds, w.Kind):
		return "kind", fmt.Sprintf("unknown kind %q (one of %s)", w.Kind, kindList())
	case w.T == nil:
		return "t", "missing: when it happened (an op's or a req's call), in nanoseconds since the history's start"
	case *w.T < 0:
		return "t", fmt.Sprintf("%d is negative", *w.T)
	}
	if f, m := validateKindFields(w); m != "" {
		return f, m
	}
	if f, m := validateNames(w); m != "" {
		return f, m
	}
	if f, m := validateTimes(w); m != "" {
		return f, m
	}
	switch w.Kind {
	case KindOp:
		return validateOp(w)
	case KindReq:
		if f, m := required(w, "client", "op"); m != "" {
			return f, m
		}
		return validateReturn(w)
	case KindFault:
		return validateFault(w)
	case KindTruth:
		return required(w, "node", "key")
	case KindNode:
		if f, m := required(w, "node", "op"); m != "" {
			return f, m
		}
		if w.Op != RoleMaster && w.Op != RoleReplica {
			return "op", fmt.Sprintf("role %q: a node record's op is %s or %s", w.Op, RoleMaster, RoleReplica)
		}
	case KindClient:
		return required(w, "client")
	}
	return "", ""
}

// kindFields are the fields that only some kinds of record carry, in
// Record's order, each with those kinds and what a record of another kind
// is told. On any other kind the field means nothing: no judge reads it
// there, so a line that has it was written meaning something the judges
// would not see, and is refused rather than read without it.
var kindFields = []struct {
	field string
	kinds []Kind
	has   func(*wireRecord) bool
	msg   string // after "a KIND record has "
}{
	{"end", []Kind{KindOp, KindReq}, func(w *wireRecord) bool { return w.End != nil },
		"no return (only op and req records do)"},
	{"client", []Kind{KindOp, KindReq, KindFault, KindClient}, func(w *wireRecord) bool { return w.Client != "" },
		"no client (only op, req, fault and client records do: the client that called, or that a fault struck)"},
	{"node", []Kind{KindReq, KindFault, KindTruth, KindNode}, func(w *wireRecord) bool { return w.Node != "" },
		"no node (only req, fault, truth and node records do: the node a command went to, that a fault struck or that held a key)"},
	{"lock", []Kind{KindOp}, func(w *wireRecord) bool { return w.Lock != "" },
		"no lock (only an op record does: the lock it called; a req record gives its key in args, a truth record in key)"},
	{"key", []Kind{KindTruth}, func(w *wireRecord) bool { return w.Key != "" },
		"no key (only a truth record does: the key a node held; an op record names its lock in lock)"},
	{"op", []Kind{KindOp, KindReq, KindFault, KindNode}, func(w *wireRecord) bool { return w.Op != "" },
		"no op (only op, req, fault and node records do: the operation, the command, the fault or the role)"},
	{"args", []Kind{KindOp, KindReq}, func(w *wireRecord) bool { return w.Args != nil },
		"no args (only op and req records do: an operation's owner, a command's arguments)"},
	{"outcome", []Kind{KindOp, KindReq}, func(w *wireRecord) bool { return w.Outcome != "" },
		"no outcome (only op and req records do: how a call ended)"},
	{"result", []Kind{KindOp, KindReq}, func(w *wireRecord) bool { return w.Result != "" },
		"no result (only op and req records do: what a call returned)"},
	{"value", []Kind{KindFault, KindTruth, KindNode}, func(w *wireRecord) bool { return w.Value != "" },
		"no value (only truth, node and fault records do: a string key's value, a node's group, a failover's new master)"},
	{"fields", []Kind{KindTruth}, func(w *wireRecord) bool { return w.Fields != nil },
		"no fields (only a truth record does: a hash's fields, or a sorted set's members and scores)"},
	{"gone", []Kind{KindTruth}, func(w *wireRecord) bool { return w.Gone },
		"no gone (only a truth record does: its key no longer exists)"},
	{"applied", []Kind{KindReq}, func(w *wireRecord) bool { return w.Applied != nil },
		"no applied times (only a req record does: when a node ran the command)"},
	{"items", []Kind{KindTruth}, func(w *wireRecord) bool { return w.Items != nil },
		"no items (only a truth record does: a list's elements)"},
	{"answered", []Kind{KindOp}, func(w *wireRecord) bool { return w.Answered != nil },
		"no answered time (only an op record of unknown outcome does: when the call returned to its caller)"},
}

// validateKindFields refuses the first field of kindFields that w has
// while its kind does not carry it. A field given empty ("items": [],
// "fields": {}) is given; "gone": false is the same as leaving it out.
func validateKindFields(w *wireRecord) (field, msg string) {
	for _, f := range kindFields {
		if f.has(w) && !slices.Contains(f.kinds, w.Kind) {
			return f.field, fmt.Sprintf("%s record has %s", article(w.Kind), f.msg)
		}
	}
	return "", ""
}

// article is "a KIND", or "an op".
func article(k Kind) string {
	if k == KindOp {
		return "an " + string(k)
	}
	return "a " + string(k)
}

// validateTimes checks a record's times against its call (t): a node
// applies a command after it was sent.
func validateTimes(w *wireRecord) (field, msg string) {
	for _, a := range w.Applied {
		if a < *w.T {
			return "applied", fmt.Sprintf("%d is before the call (t %d): a node ran the command after it was sent", a, *w.T)
		}
	}
	return "", ""
}

// spaceHint explains a detail field whose value a space cut short
// ("watchdog=30 s": the field is "watchdog=30", then "s"): when the field
// at index i of fields and the one after it make a duration together, the
// detail's fields are separated by spaces, so the hint says what to
// write; "" otherwise ("lease=10 lost" is two fields: no hint).
func spaceHint(fields []string, i int) string {
	if i+1 >= len(fields) {
		return ""
	}
	_, val, _ := strings.Cut(fields[i], "=")
	if _, err := time.ParseDuration(val + fields[i+1]); err != nil {
		return ""
	}
	return fmt.Sprintf("; the detail's fields are separated by spaces, so %q after it is a field of its own: write %s%s", fields[i+1], fields[i], fields[i+1])
}

// validateOp checks an op record: client, lock, a known op, an outcome and
// its return, a lease that parses, a release's answer.
func validateOp(w *wireRecord) (field, msg string) {
	if f, m := required(w, "client", "lock", "op"); m != "" {
		return f, m
	}
	if !slices.Contains(opNames, w.Op) {
		return "op", fmt.Sprintf("unknown operation %q (one of %s)", w.Op, strings.Join(opNames, ", "))
	}
	if f, m := validateReturn(w); m != "" {
		return f, m
	}
	fields := slices.Collect(detailFields(w.Detail))
	for i, f := range fields {
		name, val, ok := strings.Cut(f, "=")
		if !ok {
			continue // "watchdog" alone, "lost": no value to read
		}
		switch name {
		case "lease", "watchdog", "validity":
			if d, err := time.ParseDuration(val); err != nil || d < 0 {
				return "detail", fmt.Sprintf("%s=%s: bad duration %q (want a Go duration such as 10s or 1500ms%s)", name, val, val, spaceHint(fields, i))
			}
		case "released":
			if _, _, ok := ParseReleasedDetail(f); !ok {
				return "detail", fmt.Sprintf("%s: want released=K/N, K of the lock's N nodes (0 <= K <= N)", f)
			}
		}
	}
	if w.Op == OpRelease && w.Outcome == OutcomeOK && w.Result != "" && w.Result != "0" && w.Result != "1" {
		return "result", fmt.Sprintf("%q: a successful release's result is \"1\" (released), \"0\" (holds remain) or left out", w.Result)
	}
	return "", ""
}

// validateReturn checks an op or req record's outcome against its return:
// a known outcome; a return, not before the call, unless the outcome is
// unknown, which has none (the caller never learned it); an answered time
// only with an unknown outcome (it is when such a call returned to its
// caller, which a known outcome's end already says), not before the call.
func validateReturn(w *wireRecord) (field, msg string) {
	switch {
	case w.Outcome == "":
		return "outcome", fmt.Sprintf("missing (one of %s)", outcomeList())
	case !slices.Contains(outcomes, w.Outcome):
		return "outcome", fmt.Sprintf("unknown outcome %q (one of %s)", w.Outcome, outcomeList())
	case w.Outcome == OutcomeUnknown && w.End != nil:
		return "end", "an operation of unknown outcome has no return (leave end out: the caller never learned what happened)"
	case w.Outcome != OutcomeUnknown && w.End == nil:
		return "end", fmt.Sprintf("missing: the return of an operation that ended %s, in nanoseconds (an operation whose outcome the caller never learned is %q, without end)", w.Outcome, OutcomeUnknown)
	case w.End != nil && *w.End < *w.T:
		return "end", fmt.Sprintf("%d returns before its call (t %d)", *w.End, *w.T)
	case w.Answered != nil && w.Outcome != OutcomeUnknown:
		return "answered", fmt.Sprintf("an operation that ended %s has no answered time (its return is end; answered is when a call of outcome %q returned to its caller)", w.Outcome, OutcomeUnknown)
	case w.Answered != nil && *w.Answered < *w.T:
		return "answered", fmt.Sprintf("%d is before its call (t %d): a call of unknown outcome returns to its caller after it is made", *w.Answered, *w.T)
	}
	return "", ""
}

// validateFault checks a fault record: what happened, and what the
// checkers read of a failover (the group and its new master) and of a
// client's crash (the client).
func validateFault(w *wireRecord) (field, msg string) {
	if f, m := required(w, "op"); m != "" {
		return f, m
	}
	switch w.Op {
	case FaultFailover:
		return required(w, "node", "value")
	case FaultClientCrash:
		return required(w, "client")
	case FaultClockJump:
		return validateClockJump(w)
	}
	return "", ""
}

// validateClockJump checks a clock-jump fault: it names one clock, a node's
// or a client's, and its detail is the jump as a Go duration. The
// linearizability check reads a forward jump of a node's clock as the
// cause of the keys it expired, so a detail it could not read would
// silently count those losses as wrong answers.
func validateClockJump(w *wireRecord) (field, msg string) {
	switch {
	case w.Node == "" && w.Client == "":
		return "node", fmt.Sprintf("missing: a record of kind %q and op %q names the node or the client whose clock moved", w.Kind, w.Op)
	case w.Node != "" && w.Client != "":
		return "client", fmt.Sprintf("a %q fault moves one clock: it names its node or its client, not both (node %q)", w.Op, w.Node)
	}
	d, err := time.ParseDuration(w.Detail)
	switch {
	case w.Detail == "":
		return "detail", fmt.Sprintf("missing: a %q fault's detail is the jump as a Go duration, such as 5s or -250ms", w.Op)
	case err != nil:
		return "detail", fmt.Sprintf("%q: want the jump as a Go duration, such as 5s or -250ms", w.Detail)
	case d == 0:
		return "detail", fmt.Sprintf("%q: a jump of 0 moves no clock", w.Detail)
	}
	return "", ""
}

// required names the first of fields (JSON names of string fields) that w
// leaves empty.
func required(w *wireRecord, fields ...string) (field, msg string) {
	for _, f := range fields {
		if w.text(f) == "" {
			return f, fmt.Sprintf("missing: a record of kind %q names its %s", w.Kind, f)
		}
	}
	return "", ""
}

// text is w's string field of JSON name f ("" for another name).
func (w *wireRecord) text(f string) string {
	switch f {
	case "client":
		return w.Client
	case "node":
		return w.Node
	case "lock":
		return w.Lock
	case "key":
		return w.Key
	case "op":
		return w.Op
	case "value":
		return w.Value
	}
	return ""
}

func kindList() string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func outcomeList() string {
	s := make([]string, len(outcomes))
	for i, o := range outcomes {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}
