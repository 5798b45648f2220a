package realrun

// The truth of a fair lock's queue and timeouts on real servers: a list's
// items and a sorted set's scores, read with each command's run and
// recorded as the simulation records them.

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/internal/simrun"
	"github.com/locksim/locksim/scenario"
)

// truthOf is the truth records of key on node in recs, in order.
func truthOf(recs []history.Record, node, key string) []history.Record {
	var out []history.Record
	for _, r := range recs {
		if r.Kind == history.KindTruth && r.Node == node && r.Key == key {
			out = append(out, r)
		}
	}
	return out
}

// TestProbeReadsListsAndSortedSets: a command's run, probed by its proxy
// in one transaction (Cluster.probe, recordRun), records a list's items in
// order and a sorted set's scores, as the simulation states them (Detail
// "type list" and "type zset", scores by history.ScoreFields), whether the
// connection speaks RESP2 (a flat list of members and scores) or RESP3 (a
// pair for each, the score a double); a change of the items alone, or of a
// score alone, is a new record. Records hands out copies of the items.
func TestProbeReadsListsAndSortedSets(t *testing.T) {
	t.Parallel()
	for _, protocol := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp%d", protocol), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := redistest.Start(t)
			p := redistest.NewProxy(t, s.Addr)
			p.SetGate(redistest.NewGate())
			rc := redis.NewClient(&redis.Options{Addr: p.Addr, Protocol: protocol, DisableIdentity: true, MaxRetries: -1})
			t.Cleanup(func() { _ = rc.Close() })
			rec := NewRecorder()
			cl := NewCluster(rec)
			cl.AddMaster("m1", s)
			cl.Watch("q", "z")
			var mu sync.Mutex
			var atomic []bool
			var zrange []any // the first run's ZRANGE of z, after it
			p.OnRun(redistest.Command("EVAL"), cl.probe, func(run redistest.Run) bool {
				ok := run.Atomic && cl.recordRun("m1", rec.At(run.At), run.Before, run.After)
				mu.Lock()
				atomic = append(atomic, ok)
				if len(atomic) == 1 && ok {
					zrange, _ = run.After[len(run.After)-1].([]any) // z's last read
				}
				mu.Unlock()
				return false
			})
			// Each step is one script: the queue's pushes and pops and the
			// timeouts' changes of one fair-lock command.
			for _, step := range []string{
				`redis.call('RPUSH', 'q', 'c1:a'); redis.call('ZADD', 'z', 1767225634999, 'c1:a')`,
				`redis.call('RPUSH', 'q', 'c2:b'); redis.call('ZADD', 'z', 1767225639999.5, 'c2:b')`,
				`redis.call('LSET', 'q', 0, 'c2:b'); redis.call('LSET', 'q', 1, 'c1:a')`,
				`redis.call('ZADD', 'z', 1767225630000, 'c2:b')`,
				`redis.call('LPOP', 'q'); redis.call('ZREM', 'z', 'c2:b')`,
				`redis.call('DEL', 'q', 'z')`,
			} {
				if err := rc.Eval(ctx, step+"; return 1", nil).Err(); err != nil {
					t.Fatalf("%s: %v", step, err)
				}
			}
			mu.Lock()
			if len(atomic) != 6 || slices.Contains(atomic, false) {
				t.Fatalf("runs recorded in one transaction: %v", atomic)
			}
			// The reply's form is the protocol's: both forms are read.
			want := []any{"c1:a", "1767225634999"}
			if protocol == 3 {
				want = []any{[]any{"c1:a", "1767225634999"}}
			}
			if !reflect.DeepEqual(zrange, want) {
				t.Errorf("ZRANGE WITHSCORES in RESP%d: %#v, want %#v", protocol, zrange, want)
			}
			mu.Unlock()
			recs := rec.Records()
			var items []string
			for _, r := range truthOf(recs, "m1", "q") {
				items = append(items, fmt.Sprintf("%s %q gone=%v", r.Detail, r.Items, r.Gone))
			}
			wantItems := []string{
				`type list ["c1:a"] gone=false`,
				`type list ["c1:a" "c2:b"] gone=false`,
				`type list ["c2:b" "c1:a"] gone=false`,
				`type list ["c1:a"] gone=false`,
				` [] gone=true`,
			}
			if !slices.Equal(items, wantItems) {
				t.Errorf("queue's truth:\n%s\nwant:\n%s", strings.Join(items, "\n"), strings.Join(wantItems, "\n"))
			}
			var scores []string
			for _, r := range truthOf(recs, "m1", "z") {
				scores = append(scores, fmt.Sprintf("%s %v gone=%v", r.Detail, r.Fields, r.Gone))
			}
			wantScores := []string{
				`type zset map[c1:a:1767225634999] gone=false`,
				`type zset map[c1:a:1767225634999 c2:b:1767225639999.5] gone=false`,
				`type zset map[c1:a:1767225634999 c2:b:1767225630000] gone=false`,
				`type zset map[c1:a:1767225634999] gone=false`,
				` map[] gone=true`,
			}
			if !slices.Equal(scores, wantScores) {
				t.Errorf("timeouts' truth:\n%s\nwant:\n%s", strings.Join(scores, "\n"), strings.Join(wantScores, "\n"))
			}
			// The history's copies are the caller's own.
			q := truthOf(recs, "m1", "q")
			if len(q) == 0 || len(q[0].Items) == 0 {
				return // reported above
			}
			q[0].Items[0] = "changed"
			if again := truthOf(rec.Records(), "m1", "q"); again[0].Items[0] != "c1:a" {
				t.Errorf("Records shares a list's items with its caller: %q", again[0].Items)
			}
		})
	}
}

// holderField is a fair-lock waiter of baseline-fair: a client (c1..c3)
// and one of its owners (a, b).
var holderField = regexp.MustCompile(`^c[1-3]:[ab]$`)

// queueShape is what a truth record of a fair lock's queue or timeouts
// shows, times and values aside: its node, key and type, and whether its
// content is what the fair lock keeps there (waiters' holder fields; for
// the timeouts, each with a whole number of milliseconds since the
// epoch). "" for a record of another key.
func queueShape(r history.Record, lk string) string {
	if r.Kind != history.KindTruth || (r.Key != "redisson_lock_queue:{"+lk+"}" && r.Key != "redisson_lock_timeout:{"+lk+"}") {
		return ""
	}
	head := r.Node + " " + r.Key + " "
	switch {
	case r.Gone:
		return head + "gone"
	case r.Detail == "type list" && len(r.Items) > 0 && len(r.Fields) == 0 && r.Value == "":
		for _, it := range r.Items {
			if !holderField.MatchString(it) {
				return head + "list with a foreign item " + it
			}
		}
		return head + "list of waiters"
	case r.Detail == "type zset" && len(r.Fields) > 0 && len(r.Items) == 0 && r.Value == "":
		for m, score := range r.Fields {
			if ms, err := strconv.ParseInt(score, 10, 64); !holderField.MatchString(m) || err != nil || ms < 1e12 {
				return head + "zset with a foreign member " + m + "=" + score
			}
		}
		return head + "zset of waiters' timeouts"
	}
	return fmt.Sprintf("%s%s items=%q fields=%v value=%q", head, r.Detail, r.Items, r.Fields, r.Value)
}

// shapes is the set of queueShape of recs, gone records left out (whether
// a queue empties in a run is timing: the simulation's seed 3 never
// empties it).
func shapes(recs []history.Record, lk string) []string {
	var out []string
	for _, r := range recs {
		if sh := queueShape(r, lk); sh != "" && !strings.HasSuffix(sh, " gone") && !slices.Contains(out, sh) {
			out = append(out, sh)
		}
	}
	slices.Sort(out)
	return out
}

// TestFairQueueTruthMirrorsSimulation: replaying baseline-fair on real
// servers records the fair lock's queue and its timeouts on the master and
// the replica as the simulation does (its run -seed 3): lists of waiters'
// holder fields, and sorted sets of their timeouts in whole milliseconds
// since the epoch, shape for shape.
func TestFairQueueTruthMirrorsSimulation(t *testing.T) {
	t.Parallel()
	bin := redistest.Binary(t)
	const file = "../../scenarios/baseline-fair.yaml"
	s, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := simrun.Run(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	simShapes := shapes(sr.History.Records(), s.LockKey())
	want := []string{
		"m1 redisson_lock_queue:{lk} list of waiters", "m1 redisson_lock_timeout:{lk} zset of waiters' timeouts",
		"r1 redisson_lock_queue:{lk} list of waiters", "r1 redisson_lock_timeout:{lk} zset of waiters' timeouts",
	}
	if !reflect.DeepEqual(simShapes, want) {
		t.Fatalf("the simulation's queue truth: %q, want %q", simShapes, want)
	}
	// At 0.5, as TestScenarioReplay replays it (a 250 ms client timeout).
	rs, err := scenario.LoadScaled(file, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(rs, Options{Bin: bin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("real run: %s", r.Verdict)
	if got := shapes(r.Records, rs.LockKey()); !reflect.DeepEqual(got, simShapes) {
		var b strings.Builder
		for _, rec := range r.Records {
			if queueShape(rec, rs.LockKey()) != "" {
				b.WriteString(recordLine(rec))
			}
		}
		t.Fatalf("real servers' queue truth: %q\nthe simulation's: %q\nrecords:\n%s", got, simShapes, b.String())
	}
}
