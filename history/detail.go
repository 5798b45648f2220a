package history

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"
)

// The Detail texts below carry facts that checkers read back, so each has
// its writer and its parser side by side: the format is stated once.

// DriftDetail is the Detail of a node or client record whose clock was
// configured to drift by ppm ("drift +1000 ppm"); "" without drift.
func DriftDetail(ppm int64) string {
	if ppm == 0 {
		return ""
	}
	return fmt.Sprintf("drift %+d ppm", ppm)
}

// ReleasedDetail is the Detail of a release op record of a lock kept on
// several nodes (the spec's RedLock): on how many of its nodes the release
// is known to have deleted the holder's key ("released=1/3"; a node whose
// reply never came is not counted, though it may have deleted it). The
// count says what the answer does not: a release that answered "not held"
// for want of a majority still took effect on the nodes it counts.
// ParseReleasedDetail reads it back.
func ReleasedDetail(released, nodes int) string {
	return "released=" + strconv.Itoa(released) + "/" + strconv.Itoa(nodes)
}

// ParseReleasedDetail finds ReleasedDetail's field among detail's fields
// (detailFields); ok is false when there is none or it is malformed
// (negative, or more released than nodes).
func ParseReleasedDetail(detail string) (released, nodes int, ok bool) {
	for f := range detailFields(detail) {
		s, found := strings.CutPrefix(f, "released=")
		if !found {
			continue
		}
		a, b, found := strings.Cut(s, "/")
		k, err1 := strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if found && err1 == nil && err2 == nil && k >= 0 && n >= 1 && k <= n {
			return k, n, true
		}
	}
	return 0, 0, false
}

// LeaseDetail is the Detail of an acquire op record: how long the hold
// lasts on the nodes, which a checker needs to know when it may have
// expired. An explicit lease gives "lease=<lease>"; a hold the watchdog
// keeps (lease 0) gives "watchdog=<timeout>", the TTL each renewal gives
// the key, which is how long the hold lasts once the watchdog may have
// stopped. ParseLeaseDetail reads it back.
func LeaseDetail(lease, watchdog time.Duration) string {
	if lease > 0 {
		return "lease=" + lease.String()
	}
	return "watchdog=" + watchdog.String()
}

// ParseLeaseDetail finds LeaseDetail's field among detail's fields
// (detailFields), the first well-formed one: the lease (watchdog false),
// or for a watchdog hold (watchdog true) the watchdog timeout, 0 for the
// plain field "watchdog", which does not say it. ok is false when there is
// none (a malformed or negative duration does not count).
func ParseLeaseDetail(detail string) (d time.Duration, watchdog, ok bool) {
	for f := range detailFields(detail) {
		if f == "watchdog" {
			return 0, true, true
		}
		if s, found := strings.CutPrefix(f, "watchdog="); found {
			if d, err := time.ParseDuration(s); err == nil && d >= 0 {
				return d, true, true
			}
		}
		if s, found := strings.CutPrefix(f, "lease="); found {
			if d, err := time.ParseDuration(s); err == nil && d >= 0 {
				return d, false, true
			}
		}
	}
	return 0, false, false
}

// detailFields splits a Detail into the fields the parsers look among:
// a Detail may carry several facts, separated by spaces, commas or
// semicolons ("lost; released=1/3"). The fields come one by one, without
// a slice: the checkers parse a Detail per operation.
func detailFields(detail string) iter.Seq[string] {
	return strings.FieldsFuncSeq(detail, func(r rune) bool { return r == ' ' || r == ',' || r == ';' })
}

// WaitDetail is the Detail of a WAIT's req record: how many replicas
// acknowledged of how many the master had ("1 of 2 replicas
// acknowledged").
func WaitDetail(acked int64, replicas int) string {
	return fmt.Sprintf("%d of %d replicas acknowledged", acked, replicas)
}

// ParseWaitDetail reads WaitDetail's text back; ok is false for any other.
// WaitDetail's own text, which is every WAIT's detail in a simulated
// history, is read by hand (parseWaitExact): the checkers read the detail
// of every WAIT, and fmt's scanner cost more than the rest of their pass.
// Any other text is scanned (scanWaitDetail), so that the numbers a caller
// reads from a text that is not ok stay what the scanner makes of it.
func ParseWaitDetail(detail string) (acked, replicas int, ok bool) {
	if acked, replicas, ok := parseWaitExact(detail); ok {
		return acked, replicas, true
	}
	return scanWaitDetail(detail)
}

// scanWaitDetail is ParseWaitDetail by fmt's scanner, which reads any
// text.
func scanWaitDetail(detail string) (acked, replicas int, ok bool) {
	var rest string
	n, _ := fmt.Sscanf(detail, "%d of %d replicas %s", &acked, &replicas, &rest)
	return acked, replicas, n == 3 && rest == "acknowledged"
}

// parseWaitExact reads detail when it is exactly "A of R replicas
// acknowledged", A and R unsigned decimal numbers that fit an int: the
// texts WaitDetail writes for non-negative counts, on which it answers as
// scanWaitDetail does. ok is false for any other text, which it leaves to
// the scanner.
func parseWaitExact(detail string) (acked, replicas int, ok bool) {
	a, rest, found := strings.Cut(detail, " of ")
	if !found {
		return 0, 0, false
	}
	r, tail, found := strings.Cut(rest, " replicas ")
	if !found || tail != "acknowledged" || !decimalDigits(a) || !decimalDigits(r) {
		return 0, 0, false
	}
	acked, errA := strconv.Atoi(a)
	replicas, errR := strconv.Atoi(r)
	if errA != nil || errR != nil {
		return 0, 0, false
	}
	return acked, replicas, true
}

// decimalDigits reports whether s is one or more ASCII digits: no sign,
// no space, no base prefix or underscore.
func decimalDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SkippedDetail is the Detail of a FaultSkipped record: the fault named
// name could not act, because of err ("crash n2 at 3s: sim: crash n2:
// node is already down"). ParseSkippedDetail reads it back.
func SkippedDetail(name string, err error) string { return name + ": " + err.Error() }

// ParseSkippedDetail splits SkippedDetail's text into the step of the
// fault that could not act and why, for a reader: "crash n2" and "node is
// already down" above. A step's error names the step itself, after its
// package ("sim: restart n2: node is up"), and that name is the one to
// give: a crash's restart that finds the node up is a skipped restart, not
// a skipped crash; a client's crash, which its error calls a crash, keeps
// the fault's kind ("client-crash c1"). A detail in no such form gives the
// fault's name and the whole error (why "" without one).
func ParseSkippedDetail(detail string) (step, why string) {
	name, err, ok := strings.Cut(detail, ": ")
	if !ok {
		return detail, ""
	}
	if pkg, rest, ok := strings.Cut(err, ": "); ok && isPackageName(pkg) {
		err = rest
	}
	step, why, ok = strings.Cut(err, ": ")
	if !ok {
		return name, err
	}
	kind, _, _ := strings.Cut(name, " ")
	if op, target, ok := strings.Cut(step, " "); ok && strings.HasSuffix(kind, "-"+op) {
		step = kind + " " + target
	}
	return step, why
}

// isPackageName says whether s is a Go package name as an error's prefix
// gives it: lower-case letters only.
func isPackageName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// quote is strconv.Quote(s). A string of printable ASCII other than '"'
// and '\\', which Quote copies as it is (lock tokens, counts, "OK"), is
// quoted by one concatenation instead of Quote's rune-by-rune escaping: a
// req record's reply is quoted for every command a run sends (3% of a
// report's allocations went to Quote). TestQuoteIsStrconvQuote holds them
// equal.
func quote(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return strconv.Quote(s)
		}
	}
	return `"` + s + `"`
}

// FormatReply renders a Redis reply, normalised to nil, int64, string or
// []any, as a req record's Result: nil, 12, "s", [a b].
func FormatReply(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = FormatReply(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v)
}

// inFlightAtEnd is the field InFlightDetail adds to a req record's Detail.
const inFlightAtEnd = "in-flight-at-end"

// InFlightDetail is the Detail of a req record of unknown outcome whose
// request had not run but may still have been on its way to a node when
// the run ended (detail, the record's own, kept before it): a run that
// went on could have run it (the real backend's recorder marks so too a
// request it stopped following before the end). A checker settles
// nothing on such a request's having no run (checker: an operation of
// unknown outcome stays in flight).
func InFlightDetail(detail string) string {
	if detail == "" {
		return inFlightAtEnd
	}
	return detail + "; " + inFlightAtEnd
}

// InFlightAtEnd reports whether a req record's Detail says its request was
// on its way when the run ended (InFlightDetail).
func InFlightAtEnd(detail string) bool {
	return strings.HasSuffix(detail, inFlightAtEnd)
}

// NotInFlight is detail without InFlightDetail's field (a run that went on
// after its end delivered the request).
func NotInFlight(detail string) string {
	if !InFlightAtEnd(detail) {
		return detail
	}
	return strings.TrimSuffix(strings.TrimSuffix(detail, inFlightAtEnd), "; ")
}
