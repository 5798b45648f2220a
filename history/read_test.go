package history_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/history"
)

// good is a small valid history in every kind, as WriteJSONL writes it.
const good = `{"seq":0,"kind":"node","t":0,"node":"m1","op":"master","value":"m1"}
{"seq":1,"kind":"client","t":0,"client":"c1","detail":"drift +1000 ppm"}
{"seq":2,"kind":"op","t":5,"end":7,"client":"c1","lock":"lk","op":"acquire","args":["a"],"outcome":"ok","result":"12","detail":"lease=10s"}
{"seq":3,"kind":"req","t":5,"end":7,"client":"c1","node":"m1","op":"evalsha","args":["lk"],"outcome":"ok","result":"nil","applied":[6]}
{"seq":4,"kind":"truth","t":6,"node":"m1","key":"lk","fields":{"c1:a":"1"}}
{"seq":5,"kind":"fault","t":8,"node":"m1","op":"failover","value":"r1","detail":"m1 -> r1"}
{"seq":6,"kind":"op","t":9,"client":"c1","lock":"lk","op":"release","args":["a"],"outcome":"unknown","answered":9}
{"seq":7,"kind":"truth","t":10,"node":"r1","key":"lk","gone":true}
{"seq":8,"kind":"fault","t":11,"client":"c1","op":"client-crash"}
`

// TestReadJSONLRoundTrip: what WriteJSONL writes, ReadJSONL reads back
// record for record (the control that must pass), blank lines skipped.
func TestReadJSONLRoundTrip(t *testing.T) {
	recs, err := history.ReadJSONL(strings.NewReader(good+"\n  \n"), "h.jsonl", 100)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := history.WriteJSONL(&b, recs); err != nil {
		t.Fatal(err)
	}
	if b.String() != good {
		t.Fatalf("read and written again:\n%s\nwant\n%s", b.String(), good)
	}
	again, err := history.ReadJSONL(&b, "h.jsonl", 100)
	if err != nil || !reflect.DeepEqual(again, recs) {
		t.Fatalf("second read: %v, equal %v", err, reflect.DeepEqual(again, recs))
	}
}

// TestReadJSONLWithoutSeq: a history written without seq (a user's own
// log) is numbered in line order; seq on some records and not on others
// is refused.
func TestReadJSONLWithoutSeq(t *testing.T) {
	log := `{"kind":"op","t":5,"end":7,"client":"c1","lock":"lk","op":"acquire","outcome":"ok"}

{"kind":"op","t":9,"end":10,"client":"c1","lock":"lk","op":"release","outcome":"ok"}
`
	recs, err := history.ReadJSONL(strings.NewReader(log), "log.jsonl", 100)
	if err != nil || len(recs) != 2 || recs[0].Seq != 0 || recs[1].Seq != 1 {
		t.Fatalf("%v: %+v", err, recs)
	}
	mixed := strings.Replace(log, `{"kind":"op","t":9`, `{"seq":1,"kind":"op","t":9`, 1)
	_, err = history.ReadJSONL(strings.NewReader(mixed), "log.jsonl", 100)
	if err == nil || err.Error() != "log.jsonl:3: seq: given on some records and not on others (give it on every record, or on none to number them in order)" {
		t.Fatalf("mixed seq: %v", err)
	}
}

// TestReadJSONLRefusesBadLines: each bad line is refused with an error
// naming the file, the line and the field, and no records. The good
// history with one line replaced is read first as the control.
func TestReadJSONLRefusesBadLines(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(good, "\n"), "\n")
	acq := lines[2]
	for _, c := range []struct {
		name string
		line int // the line of good replaced (1-based); 0: appended
		text string
		want string // the error, after "h.jsonl:"
	}{
		{"unknown kind", 3, strings.Replace(acq, `"kind":"op"`, `"kind":"lock"`, 1), `3: kind: unknown kind "lock" (one of op, req, fault, truth, node, client)`},
		{"no kind", 3, strings.Replace(acq, `"kind":"op",`, ``, 1), "3: kind: missing"},
		{"op without client", 3, strings.Replace(acq, `"client":"c1",`, ``, 1), `3: client: missing: a record of kind "op" names its client`},
		{"op without op", 3, strings.Replace(acq, `"op":"acquire",`, ``, 1), `3: op: missing`},
		{"op without lock", 3, strings.Replace(acq, `"lock":"lk",`, ``, 1), `3: lock: missing`},
		{"unknown op", 3, strings.Replace(acq, `"op":"acquire"`, `"op":"grab"`, 1), `3: op: unknown operation "grab"`},
		{"no call time", 3, strings.Replace(acq, `"t":5,`, ``, 1), "3: t: missing"},
		{"no return", 3, strings.Replace(acq, `"end":7,`, ``, 1), "3: end: missing: the return of an operation that ended ok"},
		{"return before call", 3, strings.Replace(acq, `"end":7`, `"end":4`, 1), "3: end: 4 returns before its call (t 5)"},
		{"unknown outcome with a return", 3, strings.Replace(acq, `"outcome":"ok"`, `"outcome":"unknown"`, 1), "3: end: an operation of unknown outcome has no return"},
		{"no outcome", 3, strings.Replace(acq, `"outcome":"ok",`, ``, 1), "3: outcome: missing"},
		{"bad outcome", 3, strings.Replace(acq, `"outcome":"ok"`, `"outcome":"yes"`, 1), `3: outcome: unknown outcome "yes"`},
		{"time as a duration", 3, strings.Replace(acq, `"t":5`, `"t":"5ms"`, 1), "3: t: want a whole number of nanoseconds since the history's start, got string"},
		{"fractional time", 3, strings.Replace(acq, `"end":7`, `"end":7.5`, 1), "3: end: want a whole number of nanoseconds since the history's start, got number 7.5"},
		{"negative time", 1, strings.Replace(lines[0], `"t":0`, `"t":-1`, 1), "1: t: -1 is negative"},
		{"bad lease", 3, strings.Replace(acq, `lease=10s`, `lease=10`, 1), `3: detail: lease=10: bad duration "10"`},
		{"a bad lease before another field", 3, strings.Replace(acq, `lease=10s`, `lease=10 lost`, 1), `3: detail: lease=10: bad duration "10" (want a Go duration such as 10s or 1500ms)`},
		{"lease cut by a space", 3, strings.Replace(acq, `lease=10s`, `lease=10 s`, 1), `3: detail: lease=10: bad duration "10" (want a Go duration such as 10s or 1500ms; the detail's fields are separated by spaces, so "s" after it is a field of its own: write lease=10s)`},
		{"bad released count", 3, strings.Replace(acq, `lease=10s`, `released=4/3`, 1), "3: detail: released=4/3: want released=K/N"},
		{"bad release answer", 7, `{"seq":6,"kind":"op","t":9,"end":9,"client":"c1","lock":"lk","op":"release","outcome":"ok","result":"yes"}`, `7: result: "yes": a successful release's result`},
		{"unknown field", 3, strings.Replace(acq, `"client"`, `"owner":"a","client"`, 1), "3: owner: unknown field (a record's fields: seq, kind, t, end, client, node, lock, key, op, args, outcome, result, value, fields, gone, detail, applied, items, answered)"},
		{"no guess among the fields given", 3, strings.Replace(acq, `"client"`, `"x":1,"client"`, 1), "3: x: unknown field (a record's fields:"},
		{"misspelled field", 3, strings.Replace(acq, `"client"`, `"aplied":[6],"client"`, 1), "3: aplied: unknown field: did you mean applied? (a record's fields: seq,"},
		{"a record in a record", 3, strings.Replace(acq, `"client"`, `"Record":{},"client"`, 1), "3: Record: unknown field"},
		{"args not strings", 3, strings.Replace(acq, `["a"]`, `[1]`, 1), "3: args: want an array of strings, got number"},
		{"fields not strings", 5, strings.Replace(lines[4], `"1"}`, `1}`, 1), "5: fields: want an object of strings, got number"},
		{"gone not true or false", 8, strings.Replace(lines[7], `true`, `1`, 1), "8: gone: want true or false, got number"},
		{"applied not numbers", 4, strings.Replace(lines[3], `[6]`, `["6"]`, 1), "4: applied: want an array of whole numbers of nanoseconds, got string"},
		{"kind not a string", 3, strings.Replace(acq, `"kind":"op"`, `"kind":1`, 1), "3: kind: want a string, got number"},
		{"seq not a whole number", 3, strings.Replace(acq, `"seq":2`, `"seq":2.5`, 1), "3: seq: want a whole number, got number 2.5"},
		{"not JSON", 3, `{"seq":2,"kind":"op"`, "3: not one JSON object"},
		{"a field twice", 3, strings.Replace(acq, `"end":7`, `"end":7,"t":9`, 1), "3: t: given twice in the record"},
		{"two objects on a line", 3, acq + " " + acq, "3: not one JSON object"},
		{"an array", 3, `[1,2]`, "3: a JSON array, not an object"},
		{"duplicate seq", 4, strings.Replace(lines[3], `"seq":3`, `"seq":2`, 1), "4: seq: 2 again (line 3 has it)"},
		{"negative seq", 4, strings.Replace(lines[3], `"seq":3`, `"seq":-3`, 1), "4: seq: -3 is negative"},
		{"out of time order", 4, strings.Replace(lines[3], `"t":5,"end":7`, `"t":4,"end":7`, 1), "4: t: 4 (4ns) is before the previous record's 5 (5ns, line 3)"},
		{"applied before the call", 4, strings.Replace(lines[3], `[6]`, `[4]`, 1), "4: applied: 4 is before the call"},
		{"truth without key", 5, strings.Replace(lines[4], `"key":"lk",`, ``, 1), "5: key: missing"},
		{"failover without the new master", 6, strings.Replace(lines[5], `"value":"r1",`, ``, 1), "6: value: missing"},
		{"clock jump of no clock", 6, `{"seq":5,"kind":"fault","t":8,"op":"clock-jump","detail":"5s"}`, `6: node: missing: a record of kind "fault" and op "clock-jump" names the node or the client whose clock moved`},
		{"clock jump of two clocks", 6, `{"seq":5,"kind":"fault","t":8,"client":"c1","node":"m1","op":"clock-jump","detail":"5s"}`, `6: client: a "clock-jump" fault moves one clock: it names its node or its client, not both (node "m1")`},
		{"clock jump without its jump", 6, `{"seq":5,"kind":"fault","t":8,"node":"m1","op":"clock-jump"}`, `6: detail: missing: a "clock-jump" fault's detail is the jump as a Go duration, such as 5s or -250ms`},
		{"clock jump not a duration", 6, `{"seq":5,"kind":"fault","t":8,"node":"m1","op":"clock-jump","detail":"5 s"}`, `6: detail: "5 s": want the jump as a Go duration, such as 5s or -250ms`},
		{"clock jump by 0", 6, `{"seq":5,"kind":"fault","t":8,"client":"c1","op":"clock-jump","detail":"0s"}`, `6: detail: "0s": a jump of 0 moves no clock`},
		{"crash without the client", 9, strings.Replace(lines[8], `"client":"c1",`, ``, 1), "9: client: missing"},
		{"node of no role", 1, strings.Replace(lines[0], `"master"`, `"leader"`, 1), `1: op: role "leader"`},
		{"a return on a truth record", 5, strings.Replace(lines[4], `"t":6,`, `"t":6,"end":7,`, 1), "5: end: a truth record has no return"},
		{"answered before the call", 7, strings.Replace(lines[6], `"answered":9`, `"answered":8`, 1), "7: answered: 8 is before its call (t 9)"},
		{"answered with a return", 3, strings.Replace(acq, `"detail":"lease=10s"`, `"detail":"lease=10s","answered":7`, 1), "3: answered: an operation that ended ok has no answered time"},
		{"answered on a refusal", 3, strings.Replace(acq, `"outcome":"ok","result":"12","detail":"lease=10s"`, `"outcome":"fail","answered":7`, 1), "3: answered: an operation that ended fail has no answered time"},
		{"answered on a req", 4, `{"seq":3,"kind":"req","t":5,"client":"c1","node":"m1","op":"evalsha","args":["lk"],"outcome":"unknown","answered":7}`, "4: answered: a req record has no answered time"},
		{"answered on a truth record", 5, strings.Replace(lines[4], `"t":6,`, `"t":6,"answered":7,`, 1), "5: answered: a truth record has no answered time"},
		{"applied on an op record", 3, strings.Replace(acq, `"detail":"lease=10s"`, `"detail":"lease=10s","applied":[4]`, 1), "3: applied: an op record has no applied times (only a req record does"},
		{"items on a fault record", 6, strings.Replace(lines[5], `"detail"`, `"items":["c1:a"],"detail"`, 1), "6: items: a fault record has no items (only a truth record does"},
		{"a client name too long", 3, strings.Replace(acq, `"client":"c1"`, `"client":"`+strings.Repeat("c", 70000)+`"`, 1), "3: client: 70000 bytes: a name is at most 65536"},
		{"a holder name too long", 3, strings.Replace(acq, `["a"]`, `["`+strings.Repeat("o", 65537)+`"]`, 1), "3: args[0]: 65537 bytes: an op record's args name its holder, at most 65536"},
		{"answered not a number", 7, strings.Replace(lines[6], `"answered":9`, `"answered":"9ns"`, 1), "7: answered: want a whole number of nanoseconds since the history's start, got string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls := append([]string(nil), lines...)
			ls[c.line-1] = c.text
			recs, err := history.ReadJSONL(strings.NewReader(strings.Join(ls, "\n")+"\n"), "h.jsonl", 100)
			var le *history.LineError
			if err == nil || !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "h.jsonl:"+c.want) || recs != nil {
				t.Fatalf("got %v (%d records), want h.jsonl:%s...", err, len(recs), c.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
			if le.File != "h.jsonl" || le.Line != c.line {
				t.Fatalf("error names %s line %d, want line %d", le.File, le.Line, c.line)
			}
		})
	}
}

// TestReadJSONLClockJumps: a clock-jump fault of a node's clock or a
// client's, forward or back, in the units time.Duration prints, is read
// with its detail as written (the control for the refused clock jumps of
// TestReadJSONLErrors).
func TestReadJSONLClockJumps(t *testing.T) {
	jumps := `{"seq":9,"kind":"fault","t":12,"node":"m1","op":"clock-jump","detail":"20s"}
{"seq":10,"kind":"fault","t":13,"client":"c1","op":"clock-jump","detail":"-1m30s"}
{"seq":11,"kind":"fault","t":14,"node":"m1","op":"clock-jump","detail":"-250ms"}
`
	recs, err := history.ReadJSONL(strings.NewReader(good+jumps), "h.jsonl", 100)
	if err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, r := range recs[9:] {
		details = append(details, r.Node+r.Client+" "+r.Detail)
	}
	if want := []string{"m1 20s", "c1 -1m30s", "m1 -250ms"}; !slices.Equal(details, want) {
		t.Fatalf("clock jumps read as %q, want %q", details, want)
	}
}

// TestReadJSONLBounds: more records than allowed, a line longer than
// MaxLineBytes, and a history without an op record are refused; the
// record limit itself is read (the control).
func TestReadJSONLBounds(t *testing.T) {
	if _, err := history.ReadJSONL(strings.NewReader(good), "h.jsonl", 9); err != nil {
		t.Fatalf("9 records with a limit of 9: %v", err)
	}
	if _, err := history.ReadJSONL(strings.NewReader(good), "h.jsonl", 8); err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:9: more than 8 records") {
		t.Fatalf("9 records with a limit of 8: %v", err)
	}
	defer history.SetMaxLine(64 << 10)()
	long := good + `{"seq":9,"kind":"truth","t":12,"node":"m1","key":"` + strings.Repeat("k", 64<<10) + `"}` + "\n"
	if _, err := history.ReadJSONL(strings.NewReader(long), "h.jsonl", 100); err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:10: longer than 65536 bytes") {
		t.Fatalf("long line: %v", err)
	}
	noOps := strings.Split(good, "\n")[0] + "\n"
	if _, err := history.ReadJSONL(strings.NewReader(noOps), "h.jsonl", 100); err == nil ||
		err.Error() != `h.jsonl: 1 records and no op record (kind "op"): a history to judge holds the lock operations` {
		t.Fatalf("no op record: %v", err)
	}
}

// TestReadJSONLWeight: a history's collection members count towards its
// bound, EntriesPerRecord of them as one record: good (9 records, one
// field) and a queue of 48 items weigh 10 + 49/16 = 13 records, read
// with a limit of 13 (the control) and refused at the queue's line,
// naming its items, with a limit of 12; the same records without the
// items are read with a limit of 10. Members early in a history count
// against the records after them: a queue at line 5 and a limit of 11
// refuse the ninth record, which holds none.
func TestReadJSONLWeight(t *testing.T) {
	items := make([]string, 48)
	for i := range items {
		items[i] = fmt.Sprintf("%q", fmt.Sprintf("c%d:a", i))
	}
	queue := `{"seq":9,"kind":"truth","t":12,"node":"m1","key":"q","detail":"type list","items":[` + strings.Join(items, ",") + `]}` + "\n"
	if _, err := history.ReadJSONL(strings.NewReader(good+queue), "h.jsonl", 13); err != nil {
		t.Fatalf("weight 13, limit 13: %v", err)
	}
	_, err := history.ReadJSONL(strings.NewReader(good+queue), "h.jsonl", 12)
	if err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:10: items: 10 records holding 49 collection members by this line weigh more than 12 records") {
		t.Fatalf("weight 13, limit 12: %v", err)
	}
	bare := good + `{"seq":9,"kind":"truth","t":12,"node":"m1","key":"q","gone":true}` + "\n"
	if _, err := history.ReadJSONL(strings.NewReader(bare), "h.jsonl", 10); err != nil {
		t.Fatalf("10 records, one member, limit 10: %v", err)
	}
	// The members come first, the records that tip the weight over after
	// them, and without members of their own.
	early := strings.Replace(good, `{"seq":4,"kind":"truth","t":6,"node":"m1","key":"lk","fields":{"c1:a":"1"}}`,
		`{"seq":4,"kind":"truth","t":6,"node":"m1","key":"q","detail":"type list","items":[`+strings.Join(items, ",")+`]}`, 1)
	_, err = history.ReadJSONL(strings.NewReader(early), "h.jsonl", 11)
	if err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:9: 9 records holding 48 collection members by this line weigh more than 11 records") {
		t.Fatalf("members early, weight 12, limit 11: %v", err)
	}
}

// TestReadJSONLValues: a history's values are counted before each line
// is decoded (a decoded value costs several times its text): a req whose
// args are 5 million empty strings, or whose applied times are 5 million
// numbers, is refused at its line without being decoded, and so is a
// history whose lines hold more values in all than ValuesPerRecord a
// record of its limit (two reqs of 100 args, 107 values each, with a
// limit of 3 records: 192 values); good is read with a limit of 9 (the
// control).
func TestReadJSONLValues(t *testing.T) {
	req := func(args int) string {
		return `{"kind":"req","t":12,"end":13,"client":"c1","node":"m1","op":"get","args":[` +
			strings.TrimSuffix(strings.Repeat(`"",`, args), ",") + `],"outcome":"ok"}` + "\n"
	}
	_, err := history.ReadJSONL(strings.NewReader(req(5<<20)), "h.jsonl", 100)
	if err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:1: 5242887 values in one record, more than the 4194304 one may hold") {
		t.Fatalf("5 million args: %v", err)
	}
	applied := `{"kind":"req","t":12,"end":13,"client":"c1","node":"m1","op":"get","outcome":"ok","applied":[` +
		strings.TrimSuffix(strings.Repeat(`12,`, 5<<20), ",") + `]}` + "\n"
	if _, err := history.ReadJSONL(strings.NewReader(applied), "h.jsonl", 100); err == nil || !strings.Contains(err.Error(), "values in one record") {
		t.Fatalf("5 million applied times: %v", err)
	}
	_, err = history.ReadJSONL(strings.NewReader(req(100)+req(100)), "h.jsonl", 3)
	if err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:2: 214 values by this line, more than the 192 a history of at most 3 records may hold") {
		t.Fatalf("two reqs of 100 args, limit 3: %v", err)
	}
	if _, err := history.ReadJSONL(strings.NewReader(good), "h.jsonl", 9); err != nil {
		t.Fatalf("good, limit 9: %v", err)
	}
}

// TestReadJSONLLongLine: a record far longer than 64 KiB (a fair lock's
// queue of 2,000 waiters of 500-byte names, about 1 MB, as a run records
// it) is written and read back whole.
func TestReadJSONLLongLine(t *testing.T) {
	recs, err := history.ReadJSONL(strings.NewReader(good), "h.jsonl", 100)
	if err != nil {
		t.Fatal(err)
	}
	q := history.Record{Seq: len(recs), Kind: history.KindTruth, T: 12, Node: "m1", Key: "q", Detail: "type list"}
	for i := range 2000 {
		q.Items = append(q.Items, fmt.Sprintf("c%d:%s", i, strings.Repeat("o", 500)))
	}
	recs = append(recs, q)
	var b bytes.Buffer
	if err := history.WriteJSONL(&b, recs); err != nil {
		t.Fatal(err)
	}
	if b.Len() < 1_000_000 {
		t.Fatalf("the history is %d bytes, want a line of about 1 MB", b.Len())
	}
	again, err := history.ReadJSONL(&b, "h.jsonl", 10_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again[len(again)-1].Items, q.Items) {
		t.Fatal("the queue's items read back differ")
	}
}

// TestReadJSONLKindFields: each field that only some kinds carry (applied
// on req records; fields, gone and items on truth records; lock on op
// records; ...) is read on its kinds (the control) and refused on every
// other, given empty too, with the line and the field named. "gone":
// false is as if left out, so read on any kind.
func TestReadJSONLKindFields(t *testing.T) {
	base := map[history.Kind]string{
		history.KindOp:     `{"kind":"op","t":5,"end":7,"client":"c1","lock":"lk","op":"acquire","outcome":"ok"}`,
		history.KindReq:    `{"kind":"req","t":5,"end":7,"client":"c1","node":"m1","op":"evalsha","outcome":"ok"}`,
		history.KindFault:  `{"kind":"fault","t":5,"node":"m1","op":"crash"}`,
		history.KindTruth:  `{"kind":"truth","t":5,"node":"m1","key":"lk"}`,
		history.KindNode:   `{"kind":"node","t":5,"node":"m1","op":"master","value":"m1"}`,
		history.KindClient: `{"kind":"client","t":5,"client":"c1","detail":"drift +1000 ppm"}`,
	}
	kinds := []history.Kind{history.KindOp, history.KindReq, history.KindFault, history.KindTruth, history.KindNode, history.KindClient}
	for _, c := range []struct {
		field, json string
		on          []history.Kind // the kinds that carry it
		says        string         // the refusal, after "a KIND record has "
	}{
		{"applied", `"applied":[6]`, []history.Kind{history.KindReq}, "no applied times (only a req record does: when a node ran the command)"},
		{"applied", `"applied":[]`, []history.Kind{history.KindReq}, "no applied times"},
		{"fields", `"fields":{"c1:a":"1"}`, []history.Kind{history.KindTruth}, "no fields (only a truth record does: a hash's fields, or a sorted set's members and scores)"},
		{"fields", `"fields":{}`, []history.Kind{history.KindTruth}, "no fields"},
		{"gone", `"gone":true`, []history.Kind{history.KindTruth}, "no gone (only a truth record does: its key no longer exists)"},
		{"items", `"items":["c1:a"]`, []history.Kind{history.KindTruth}, "no items (only a truth record does: a list's elements)"},
		{"items", `"items":[]`, []history.Kind{history.KindTruth}, "no items"},
		{"gone", `"gone":false`, nil, ""},
		{"client", `"client":"c2"`, []history.Kind{history.KindOp, history.KindReq, history.KindFault, history.KindClient}, "no client (only op, req, fault and client records do"},
		{"node", `"node":"m2"`, []history.Kind{history.KindReq, history.KindFault, history.KindTruth, history.KindNode}, "no node (only req, fault, truth and node records do"},
		{"lock", `"lock":"lk"`, []history.Kind{history.KindOp}, "no lock (only an op record does: the lock it called; a req record gives its key in args, a truth record in key)"},
		{"key", `"key":"lk"`, []history.Kind{history.KindTruth}, "no key (only a truth record does: the key a node held; an op record names its lock in lock)"},
		{"op", `"op":"acquire"`, []history.Kind{history.KindOp, history.KindReq, history.KindFault, history.KindNode}, "no op (only op, req, fault and node records do"},
		{"args", `"args":["a"]`, []history.Kind{history.KindOp, history.KindReq}, "no args (only op and req records do"},
		{"args", `"args":[]`, []history.Kind{history.KindOp, history.KindReq}, "no args"},
		{"outcome", `"outcome":"ok"`, []history.Kind{history.KindOp, history.KindReq}, "no outcome (only op and req records do"},
		{"result", `"result":"1"`, []history.Kind{history.KindOp, history.KindReq}, "no result (only op and req records do"},
		{"value", `"value":"m1"`, []history.Kind{history.KindFault, history.KindTruth, history.KindNode}, "no value (only truth, node and fault records do"},
	} {
		for _, k := range kinds {
			t.Run(c.json+" on "+string(k), func(t *testing.T) {
				// The field goes after t, unless the base line gives it
				// already (an op record's client): a record names a field
				// once.
				line := base[k]
				if !strings.Contains(line, `"`+c.field+`":`) {
					line = strings.Replace(line, `"t":5,`, `"t":5,`+c.json+`,`, 1)
				}
				in := `{"kind":"op","t":0,"end":1,"client":"c0","lock":"lk","op":"acquire","outcome":"fail"}` + "\n" + line + "\n"
				recs, err := history.ReadJSONL(strings.NewReader(in), "h.jsonl", 10)
				if c.says == "" || slices.Contains(c.on, k) {
					if err != nil || len(recs) != 2 {
						t.Fatalf("%s refused: %v", line, err)
					}
					return
				}
				a := "a "
				if k == history.KindOp {
					a = "an "
				}
				want := "h.jsonl:2: " + c.field + ": " + a + string(k) + " record has " + c.says
				var le *history.LineError
				if err == nil || !errors.As(err, &le) || !strings.HasPrefix(err.Error(), want) || recs != nil {
					t.Fatalf("%s: got %v (%d records), want %s...", line, err, len(recs), want)
				}
				if le.Line != 2 || le.Field != c.field {
					t.Fatalf("error names line %d field %q, want line 2 field %q", le.Line, le.Field, c.field)
				}
			})
		}
	}
}
