package traffic_test

// Tests run workloads in a simulated world and read the history with the
// checkers. Processes never call t.Fatal; assertions run after w.Run.

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// TestMain checks that no process outlives its world: every test closes
// its worlds (t.Cleanup) before goleak looks, after the last test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	ms     = time.Millisecond
	sec    = time.Second
	minute = time.Minute
	// forever closes the holdings still open at the end of a run with an
	// end that nothing reaches, so open ones are told apart.
	forever = time.Duration(1 << 62)
)

// env is a world of independent masters (no replicas) and clients.
type env struct {
	t       *testing.T
	w       *sim.World
	clients []*sim.Client
}

func newEnv(t *testing.T, seed uint64, groups ...string) *env {
	t.Helper()
	w := sim.New(seed)
	t.Cleanup(w.Close)
	for _, g := range groups {
		if _, err := w.AddNode(setup.NodeConfig{Name: g}); err != nil {
			t.Fatal(err)
		}
	}
	return &env{t: t, w: w}
}

// client adds a client with the default latency and timeout, no retries.
func (e *env) client(name string) *sim.Client {
	e.t.Helper()
	c, err := e.w.AddClient(setup.ClientConfig{Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	e.clients = append(e.clients, c)
	return c
}

// clientsWith adds n clients c1..cn and starts start on each.
func (e *env) clientsWith(n int, start func(c *sim.Client) error) {
	e.t.Helper()
	for i := 1; i <= n; i++ {
		if err := start(e.client(fmt.Sprintf("c%d", i))); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) run(until time.Duration) {
	e.t.Helper()
	if err := e.w.Run(until); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) records() []history.Record { return e.w.History().Records() }

// ops are the op records.
func (e *env) ops() []history.Record {
	var out []history.Record
	for _, r := range e.records() {
		if r.Kind == history.KindOp {
			out = append(out, r)
		}
	}
	return out
}

func (e *env) dump() string {
	var b bytes.Buffer
	_ = e.w.History().WriteJSONL(&b)
	s := b.String()
	if len(s) > 20000 {
		s = "...\n" + s[len(s)-20000:]
	}
	return s
}

// openHolder is a client holding lk right now (by belief), or "".
func (e *env) openHolder(lk string) string {
	for _, h := range checker.Holdings(e.records(), forever) {
		if h.Lock == lk && h.To == forever {
			client, _, _ := strings.Cut(h.Client, "/")
			return client
		}
	}
	return ""
}

// pauseHolder runs until some client holds lk (from at least from), then
// pauses it for d and returns its name and when the pause ends.
func (e *env) pauseHolder(lk string, from, d time.Duration) (string, time.Duration) {
	e.t.Helper()
	e.run(from)
	for t := from; t < from+time.Minute; t += 10 * ms {
		e.run(t)
		if name := e.openHolder(lk); name != "" {
			c, err := e.w.Client(name)
			if err != nil {
				e.t.Fatal(err)
			}
			if err := c.Pause(d); err != nil {
				e.t.Fatal(err)
			}
			return name, e.w.Now() + d
		}
	}
	e.t.Fatalf("nobody held %s within a minute of %v", lk, from)
	return "", 0
}

// conventions are what a workload's records must look like.
type conventions struct {
	lock      string        // every record's Lock (but writes')
	resource  string        // the Lock of "write" records
	owners    []string      // Args[0] of acquire, release and expire; nil: no Args
	ops       []string      // the op names allowed
	fenced    bool          // acquire ok Results are increasing fencing tokens
	noExpire  bool          // no "expire" records (no faults, lease outlives hold)
	noUnknown bool          // every operation returned (no faults)
	end       time.Duration // with noUnknown: operations called in the last 5 s may still be open
}

// checkConventions checks op records against checker/doc.go's conventions.
func checkConventions(t *testing.T, recs []history.Record, cv conventions) {
	t.Helper()
	type token struct {
		end time.Duration
		tok int64
	}
	var tokens []token
	for _, r := range recs {
		if r.Kind != history.KindOp {
			continue
		}
		if !slices.Contains(cv.ops, r.Op) {
			t.Errorf("record %d: op %q not one of %v", r.Seq, r.Op, cv.ops)
			continue
		}
		wantLock := cv.lock
		if r.Op == "write" {
			wantLock = cv.resource
		}
		if r.Lock != wantLock {
			t.Errorf("record %d (%s): lock %q, want %q", r.Seq, r.Op, r.Lock, wantLock)
		}
		if r.Client == "" {
			t.Errorf("record %d (%s): no client", r.Seq, r.Op)
		}
		switch {
		case cv.owners == nil && len(r.Args) != 0:
			t.Errorf("record %d (%s): args %q on a lock without owners", r.Seq, r.Op, r.Args)
		case cv.owners != nil && (len(r.Args) != 1 || !slices.Contains(cv.owners, r.Args[0])):
			t.Errorf("record %d (%s): args %q, want [owner] with owner one of %v", r.Seq, r.Op, r.Args, cv.owners)
		}
		switch r.Outcome {
		case history.OutcomeOK, history.OutcomeFail:
			if _, ok := r.Returned(); !ok {
				t.Errorf("record %d (%s): outcome %s without a return", r.Seq, r.Op, r.Outcome)
			}
		case history.OutcomeUnknown:
			if cv.noUnknown && r.At() < cv.end-5*sec {
				t.Errorf("record %d (%s): unknown outcome without faults", r.Seq, r.Op)
			}
		default:
			t.Errorf("record %d (%s): outcome %q (%s)", r.Seq, r.Op, r.Outcome, r.Result)
		}
		if r.Op == "expire" {
			if cv.noExpire {
				t.Errorf("record %d: expire at %v without faults", r.Seq, r.At())
			}
			if end, ok := r.Returned(); !ok || end != r.At() || r.Outcome != history.OutcomeOK {
				t.Errorf("record %d: expire should be a zero-length ok op", r.Seq)
			}
		}
		if r.Op == "acquire" || r.Op == "acquire-read" {
			wd, isWD := strings.CutPrefix(r.Detail, "watchdog=")
			if d, err := time.ParseDuration(wd); isWD && (err != nil || d <= 0) || !isWD && !strings.HasPrefix(r.Detail, "lease=") {
				t.Errorf("record %d: acquire detail %q, want lease=<d> or watchdog=<timeout>", r.Seq, r.Detail)
			}
		}
		if r.Op == "acquire" && r.Outcome == history.OutcomeOK && cv.fenced {
			tok, err := strconv.ParseInt(r.Result, 10, 64)
			end, _ := r.Returned()
			if err != nil || tok <= 0 {
				t.Errorf("record %d: fencing token %q: want a positive decimal", r.Seq, r.Result)
			}
			tokens = append(tokens, token{end, tok})
		}
	}
	// Tokens grow in the order the acquires returned (an acquire that
	// waited was called before others that returned first).
	slices.SortStableFunc(tokens, func(a, b token) int { return cmp.Compare(a.end, b.end) })
	for i := 1; i < len(tokens); i++ {
		if tokens[i].tok <= tokens[i-1].tok {
			t.Errorf("fencing token %d returned at %v after %d: want increasing tokens", tokens[i].tok, tokens[i].end, tokens[i-1].tok)
		}
	}
}

// opsNamed returns the op records of recs with the given Op.
func opsNamed(recs []history.Record, op string) []history.Record {
	var out []history.Record
	for _, r := range recs {
		if r.Kind == history.KindOp && r.Op == op {
			out = append(out, r)
		}
	}
	return out
}

// checkExclusion fails on any overlap and unless every client held lk.
func checkExclusion(t *testing.T, e *env, lk string, end time.Duration) []checker.Holding {
	t.Helper()
	hs := checker.Holdings(e.records(), end)
	if ov := checker.Overlaps(hs); len(ov) > 0 {
		t.Errorf("%d overlaps without faults, first: %v", len(ov), ov[0])
	}
	for _, c := range e.clients {
		n := 0
		for _, h := range hs {
			if h.Lock == lk && (h.Client == c.Name() || strings.HasPrefix(h.Client, c.Name()+"/")) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("client %s never held %s", c.Name(), lk)
		}
	}
	return hs
}

// checkBalanced checks that each holder gives back as many holds as it
// took: in every client's sequence of acquires and releases of one kind,
// the releases of a holding follow its acquires and match their number.
func checkBalanced(t *testing.T, recs []history.Record, acq, rel string) {
	t.Helper()
	depth := map[string]int{} // client -> holds taken, not yet given back
	releasing := map[string]bool{}
	for _, r := range recs {
		if r.Kind != history.KindOp {
			continue
		}
		switch r.Op {
		case acq:
			if releasing[r.Client] {
				t.Errorf("record %d: %s by %s before its previous holding was given back (%d left)", r.Seq, acq, r.Client, depth[r.Client])
			}
			if r.Outcome == history.OutcomeOK {
				depth[r.Client]++
			}
		case rel:
			if depth[r.Client] == 0 {
				t.Errorf("record %d: %s by %s with no hold", r.Seq, rel, r.Client)
				continue
			}
			depth[r.Client]--
			releasing[r.Client] = depth[r.Client] > 0
		}
	}
}

// count counts op records by op name, client ("" any) and outcome ("" any).
func count(recs []history.Record, op, client string, outcome history.Outcome) int {
	n := 0
	for _, r := range recs {
		if r.Kind == history.KindOp && r.Op == op && (client == "" || r.Client == client) && (outcome == "" || r.Outcome == outcome) {
			n++
		}
	}
	return n
}

// overlapsWith reports whether some overlap involves client.
func overlapsWith(ov []checker.Overlap, client string) bool {
	for _, o := range ov {
		for _, h := range []string{o.A.Client, o.B.Client} {
			if h == client || strings.HasPrefix(h, client+"/") {
				return true
			}
		}
	}
	return false
}

// checkHeldUntilRelease checks that holder's holding that spans woke (the
// end of its pause) ends at the call of one of its releases, after woke: a
// trusting watchdog user's belief, which nothing but the release ends.
func checkHeldUntilRelease(t *testing.T, recs []history.Record, holder string, woke, end time.Duration) {
	t.Helper()
	for _, h := range checker.Holdings(recs, end) {
		if c, _, _ := strings.Cut(h.Client, "/"); c != holder || h.From >= woke || h.To < woke {
			continue
		}
		for _, r := range opsNamed(recs, "release") {
			if r.Client == holder && r.At() == h.To {
				return
			}
		}
		t.Errorf("%s's holding %v–%v across the pause does not end at a release", holder, h.From, h.To)
		return
	}
	t.Errorf("%s has no holding across the end of its pause (%v)", holder, woke)
}
