package sim_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/lock"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/sim"
)

// twinned are the scripts that have a Go twin (sim/native.go), with the
// shape the library sends: KEYS and ARGV sizes, and which entries are
// numbers (a lease or TTL in ms).
var twinned = []struct {
	sc         *lock.Script
	keys, argv int
}{
	{scripts.ReentrantAcquire, 2, 4},
	{scripts.FencedAcquire, 3, 4},
	{scripts.ReentrantUnlock, 3, 5},
	{scripts.RenewBatch, 2, 3}, // two holds
	{scripts.ReentrantForceUnlock, 2, 1},
	{scripts.SimpleRelease, 2, 2},
	{scripts.SimpleObtain, 1, 2},
	{scripts.SimpleRefresh, 1, 2},
	{scripts.RedlockExtend, 1, 2},
	{scripts.FairAcquire, 3, 6},
	{scripts.FairUnlock, 5, 6},
	{scripts.FairDequeue, 2, 2},
}

// twinIndex is sc's index in twinned.
func twinIndex(sc *lock.Script) int {
	for i, tw := range twinned {
		if tw.sc == sc {
			return i
		}
	}
	panic("not twinned: " + sc.Name)
}

// nativeStep is one step of TestNativeMatchesLua: a twinned script with
// drawn KEYS and ARGV, or a plain command that shapes the key space, then
// a wait.
type nativeStep struct {
	script int // index in twinned; -1 for cmd
	keys   []string
	argv   []any
	cmd    []any
	wait   time.Duration
}

// nativeKeys and nativeValues are what the steps draw from: few keys, so
// that scripts meet each other's keys, of every type; values that are
// plain decimals, Lua numbers that are not (" 1", "0x10", "1.5", "1e2"),
// numbers beyond 2^53 (a float64 rounds them), and words.
var (
	nativeKeys   = []string{"lk", "lk2", "latch", "ch", "tok", "q", "tq"}
	nativeValues = []string{"", "0", "1", "2", "-1", "07", " 1", "0x10", "1.5", "1e2", "abc", "o1", "o2",
		"9007199254740993", "9007199254740994", "99999999999999999999"}
	nativeFields = []string{"o1", "o2", ""}
	nativeMillis = []string{"1", "250", "1000", "3000", "0", "-5", "abc", "1099511627776000"}
)

// The fair scripts' draws: the queue q and the timeouts tq of a fair lock
// (nativeKeys, of any type too), their members (nativeFields), the
// callers' clocks (fairNows, ARGV[4]) and waits (ARGV[3]) as the library
// sends them (drawFairArg now and then draws any nativeValues instead:
// numbers Lua reads otherwise, or not at all), and timeouts before, at and
// after the clocks, fractional, negative, beyond what gopher-lua's
// tonumber reads (inf, 1e300: the text's errors).
var (
	fairNows   = []string{"1000000", "1000000", "1003000", "1006000", "1010000", "1020000", "-5"}
	fairScores = []string{"999000", "1000000", "1001000", "1003000", "1005000", "1020000", "1000000.5",
		"-5", "0", "inf", "-inf", "1e300", "1e20"}
	fairWaits = []string{"0", "250", "1000", "3000", "3000", "-5"}
)

// drawFairArg draws ARGV[i+1] of the fair script sc in the shape the
// library sends (lock/fairlock.go: tryOnce, unlockOnce; fair_wait.go),
// or one time in odd+1 anything.
func drawFairArg(rt *rapid.T, sc *lock.Script, i, odd int) string {
	if rapid.IntRange(0, odd).Draw(rt, "oddArg") == 0 {
		return rapid.SampledFrom(nativeValues).Draw(rt, "a")
	}
	var pool []string
	switch {
	case sc == scripts.FairDequeue && i == 0, sc == scripts.FairAcquire && i == 1, sc == scripts.FairUnlock && i == 2:
		pool = nativeFields // holder field
	case sc == scripts.FairDequeue && i == 1, sc == scripts.FairAcquire && i == 2:
		pool = fairWaits
	case i == 3:
		pool = fairNows
	case sc == scripts.FairAcquire && i == 4:
		pool = []string{"queue", "queue", "once", "x"}
	case sc == scripts.FairAcquire && i == 5, sc == scripts.FairUnlock && i == 5: // reentrant; latch on
		pool = []string{"1", "1", "0", "", "x"}
	case sc == scripts.FairUnlock && i == 0:
		pool = []string{"released", ""}
	default: // a lease, a latch TTL
		pool = nativeMillis
	}
	return rapid.SampledFrom(pool).Draw(rt, "a")
}

// fairKeys are the keys the library sends each fair script (lock, queue,
// timeouts, channel, latch; queue and timeouts for fair_dequeue).
func fairKeys(sc *lock.Script) []string {
	if sc == scripts.FairDequeue {
		return []string{"q", "tq"}
	}
	return []string{"lk", "q", "tq", "ch", "latch"}
}

// libraryShape reports whether a twinned script's drawn ARGV, of the
// length the library sends, has the library's shape, in which its twin
// must run: for the fair scripts, the wait and the clock decimals as the
// library formats them.
func libraryShape(sc *lock.Script, argv []any) bool {
	decimal := func(i int) bool { return fairDecimal.MatchString(argv[i].(string)) }
	switch sc {
	case scripts.FairAcquire:
		return decimal(2) && decimal(3)
	case scripts.FairUnlock:
		return decimal(3)
	case scripts.FairDequeue:
		return decimal(1)
	}
	return true
}

// fairDecimal is an integer of up to 15 digits as the library formats it.
var fairDecimal = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,14})$`)

// drawNativeSteps draws a sequence of steps: of every twinned script
// alike, or (half the sequences) mostly of the fair scripts on a fair
// lock's keys, so that their queues grow, time out and drain.
func drawNativeSteps(rt *rapid.T) []nativeStep {
	fair := rapid.Bool().Draw(rt, "fairFocus")
	minLen, maxLen := 1, 40
	if fair {
		minLen, maxLen = 8, 60
	}
	return rapid.SliceOfN(rapid.Custom(func(rt *rapid.T) nativeStep { return drawNativeStep(rt, fair) }), minLen, maxLen).Draw(rt, "steps")
}

// fairTwins are the fair scripts' indices in twinned, the acquire most
// often (drawn under the fair focus).
var fairTwins = []int{twinIndex(scripts.FairAcquire), twinIndex(scripts.FairAcquire), twinIndex(scripts.FairAcquire),
	twinIndex(scripts.FairUnlock), twinIndex(scripts.FairUnlock), twinIndex(scripts.FairDequeue)}

func drawNativeStep(rt *rapid.T, fairFocus bool) nativeStep {
	s := nativeStep{wait: time.Duration(rapid.IntRange(0, 1500).Draw(rt, "wait")) * time.Millisecond}
	if rapid.IntRange(0, 3).Draw(rt, "isCmd") == 0 {
		s.script, s.cmd = -1, drawNativeCmd(rt, fairFocus)
		return s
	}
	s.script = rapid.IntRange(0, len(twinned)-1).Draw(rt, "script")
	if fairFocus && rapid.IntRange(0, 4).Draw(rt, "fairScript") > 0 {
		s.script = rapid.SampledFrom(fairTwins).Draw(rt, "fairTwin")
	}
	tw := twinned[s.script]
	fair := tw.sc == scripts.FairAcquire || tw.sc == scripts.FairUnlock || tw.sc == scripts.FairDequeue
	odd := 4 // one in odd+1 scripts has too few or too many keys or ARGV, one in odd+1 fair keys is any key
	if fairFocus {
		odd = 9
	}
	nkeys, nargv := tw.keys, tw.argv
	if rapid.IntRange(0, odd).Draw(rt, "oddShape") == 0 { // too few or too many: the Lua runner's
		nkeys = rapid.IntRange(0, tw.keys+1).Draw(rt, "nkeys")
		nargv = rapid.IntRange(0, tw.argv+1).Draw(rt, "nargv")
	}
	for i := range nkeys {
		k := rapid.SampledFrom(nativeKeys).Draw(rt, "k")
		if fair && i < len(fairKeys(tw.sc)) && rapid.IntRange(0, odd).Draw(rt, "fairKey") > 0 {
			k = fairKeys(tw.sc)[i]
		}
		if i == 1 && tw.sc == scripts.FencedAcquire && rapid.IntRange(0, 3).Draw(rt, "counter") > 0 {
			k = "tok" // the token counter, often near 2^53
		}
		s.keys = append(s.keys, k)
	}
	for i := range nargv {
		if fair {
			s.argv = append(s.argv, drawFairArg(rt, tw.sc, i, 2*odd))
			continue
		}
		var pool []string
		switch {
		case i == 4 && tw.sc == scripts.ReentrantUnlock: // the latch switch
			pool = []string{"1", "0", "", "x"}
		case i == 2 && (tw.sc == scripts.ReentrantAcquire || tw.sc == scripts.FencedAcquire): // request id
			pool = []string{"", "r1", "r2"}
		case rapid.IntRange(0, 2).Draw(rt, "millis") == 0:
			pool = nativeMillis
		case rapid.Bool().Draw(rt, "field"):
			pool = nativeFields
		default:
			pool = nativeValues
		}
		s.argv = append(s.argv, rapid.SampledFrom(pool).Draw(rt, "a"))
	}
	return s
}

// drawNativeCmd draws a plain command that shapes the key space: strings
// and hashes of any key, lists and sorted sets mostly on the fair lock's
// queue and timeouts (only those under the fair focus).
func drawNativeCmd(rt *rapid.T, fairFocus bool) []any {
	key := rapid.SampledFrom(nativeKeys).Draw(rt, "key")
	val := rapid.SampledFrom(nativeValues).Draw(rt, "val")
	c := rapid.IntRange(0, 7).Draw(rt, "cmd")
	if fairFocus && rapid.IntRange(0, 3).Draw(rt, "fairCmd") > 0 {
		c = rapid.SampledFrom([]int{2, 5, 5, 6, 6, 6, 7}).Draw(rt, "fairCmd")
	}
	switch c {
	case 0:
		return []any{"SET", key, val, "PX", rapid.SampledFrom([]int{100, 1000, 5000}).Draw(rt, "px")}
	case 1:
		return []any{"HSET", key, rapid.SampledFrom(nativeFields).Draw(rt, "field"), val}
	case 2:
		if fairFocus && rapid.IntRange(0, 3).Draw(rt, "fairDel") > 0 {
			key = rapid.SampledFrom([]string{"lk", "q", "tq"}).Draw(rt, "delKey")
		}
		return []any{"DEL", key}
	case 3:
		return []any{"SET", key, val}
	case 4: // a token counter at 2^53, where INCR's answer is not a float64
		return []any{"SET", "tok", rapid.SampledFrom([]string{"9007199254740992", "9007199254740993", "9007199254740994"}).Draw(rt, "big")}
	case 5: // a waiter queued (the queue, mostly; any key)
		if rapid.IntRange(0, 3).Draw(rt, "anyList") > 0 {
			key = "q"
		}
		return []any{"RPUSH", key, rapid.SampledFrom(nativeFields).Draw(rt, "member")}
	case 6: // a waiter's timeout (the timeouts, mostly; any key)
		if rapid.IntRange(0, 3).Draw(rt, "anyZset") > 0 {
			key = "tq"
		}
		return []any{"ZADD", key, rapid.SampledFrom(fairScores).Draw(rt, "score"), rapid.SampledFrom(nativeFields).Draw(rt, "member")}
	}
	// the lock held by a holder, with an odd count now and then
	return []any{"HSET", "lk", rapid.SampledFrom(nativeFields).Draw(rt, "holder"), rapid.SampledFrom([]string{"1", "1", "2", "abc"}).Draw(rt, "count")}
}

// TestNativeMatchesLua: the Go twins (LuaFast) and the scripts' text run
// by the Lua runner (LuaInterpreted) give byte-identical histories
// (replies, the truth of every key the scripts wrote, replication to a
// replica), the same key spaces on master and replica after every step
// (types, values, hash fields, TTLs to the millisecond), and the same
// published messages, for random sequences of the twinned scripts with
// drawn arguments on a key space shaped by plain commands (half of them
// around a fair lock's queue and timeouts: drawNativeSteps). It checks
// that the twins actually ran, and TestNativeCatchesPlantedBug that the
// comparison finds a twin that differs from its text.
func TestNativeMatchesLua(t *testing.T) {
	defer goleak.VerifyNone(t)
	rapid.Check(t, func(rt *rapid.T) {
		steps := drawNativeSteps(rt)
		twin := runNativeSteps(rt, setup.LuaFast, steps)
		text := runNativeSteps(rt, setup.LuaInterpreted, steps)
		if err := twin.differs(text); err != "" {
			rt.Fatal(err)
		}
		if text.natives != 0 {
			rt.Fatalf("LuaInterpreted ran %d twins", text.natives)
		}
		// Every script in the library's shape ran as its twin (others may).
		for i, s := range steps {
			if s.script >= 0 && len(s.keys) == twinned[s.script].keys && len(s.argv) == twinned[s.script].argv &&
				libraryShape(twinned[s.script].sc, s.argv) && twin.ran[i] != 1 {
				rt.Fatalf("step %d (%s in the library's shape) ran %d twins, want 1", i, twinned[s.script].sc.Name, twin.ran[i])
			}
		}
	})
}

// TestNativeCatchesPlantedBug is the control of TestNativeMatchesLua's
// comparison: a twin planted with a bug gives a difference on a sequence
// that shows it.
func TestNativeCatchesPlantedBug(t *testing.T) {
	defer goleak.VerifyNone(t)
	acquire := nativeStep{script: 0, keys: []string{"lk", "latch"}, argv: []any{"3000", "o1", "", "1000"}}
	for _, c := range []struct {
		bug   string
		steps []nativeStep
	}{
		{"unlock-publishes-elsewhere", []nativeStep{acquire,
			{script: 2, keys: []string{"lk", "ch", "latch"}, argv: []any{"released", "3000", "o1", "1000", "1"}}}},
		{"renew-anyones-lock", []nativeStep{acquire,
			{script: 3, keys: []string{"lk", "lk2"}, argv: []any{"9000", "o2", "o1"}}}},
		// o1 queued, due at 1000000: o2's try at 1000000 drops it and takes
		// the lock.
		{"fair-keeps-due-head", []nativeStep{
			{script: -1, cmd: []any{"RPUSH", "q", "o1"}},
			{script: -1, cmd: []any{"ZADD", "tq", "1000000", "o1"}},
			fairAcquire("o2", "1000000", "once")}},
		// o1 holds, o2 queues; o1's release tells o2 on ch:o2.
		{"fair-unlock-tells-nobody", []nativeStep{
			fairAcquire("o1", "1000000", "queue"), fairAcquire("o2", "1000000", "queue"),
			{script: twinIndex(scripts.FairUnlock), keys: []string{"lk", "q", "tq", "ch", "latch"}, argv: []any{"released", "3000", "o1", "1000000", "1000", "1"}}}},
		// o1 holds, o2 and then "" queue; o2 leaves, and ""'s timeout
		// moves 5000 sooner.
		{"fair-dequeue-gives-no-time-back", []nativeStep{
			fairAcquire("o1", "1000000", "queue"), fairAcquire("o2", "1000000", "queue"), fairAcquire("", "1000000", "queue"),
			{script: twinIndex(scripts.FairDequeue), keys: []string{"q", "tq"}, argv: []any{"o2", "5000"}}}},
	} {
		restore := sim.PlantNativeBug(c.bug)
		differs := runNativeSteps(t, setup.LuaFast, c.steps).differs(runNativeSteps(t, setup.LuaInterpreted, c.steps))
		restore()
		if differs == "" {
			t.Errorf("%s: the twin with the bug and the text gave the same run", c.bug)
		}
		if again := runNativeSteps(t, setup.LuaFast, c.steps).differs(runNativeSteps(t, setup.LuaInterpreted, c.steps)); again != "" {
			t.Errorf("%s: restored twin differs: %s", c.bug, again)
		}
	}
}

// fairAcquire is a fair_acquire step of holder field at the clock now in
// mode, with a lease of 3 s and a wait of 5 s, as the library sends it.
func fairAcquire(field, now, mode string) nativeStep {
	return nativeStep{script: twinIndex(scripts.FairAcquire), keys: []string{"lk", "q", "tq"},
		argv: []any{"3000", field, "5000", now, mode, "1"}}
}

// TestNativeRoundsLikeLua: a fenced token above 2^53 comes back as Lua's
// float64 makes it (9007199254740995 is 9007199254740996), as a real
// Redis's Lua answers too, from the twin and from the text alike.
func TestNativeRoundsLikeLua(t *testing.T) {
	defer goleak.VerifyNone(t)
	steps := []nativeStep{
		{script: -1, cmd: []any{"SET", "tok", "9007199254740994"}},
		{script: 1, keys: []string{"lk", "tok", "latch"}, argv: []any{"3000", "o1", "r1", "1000"}},
	}
	twin := runNativeSteps(t, setup.LuaFast, steps)
	if err := twin.differs(runNativeSteps(t, setup.LuaInterpreted, steps)); err != "" {
		t.Fatal(err)
	}
	if twin.natives != 1 || !strings.Contains(twin.dumps, "[-1 9007199254740996]") {
		t.Fatalf("%d twin runs; want the token 9007199254740996 in:\n%s", twin.natives, twin.dumps)
	}
}

// nativeChannels are the channels runNativeSteps listens on: the unlock
// scripts' (KEYS[2] or KEYS[4] drawn as "ch"), and each fair waiter's own
// (the channel, ':' and its field).
var nativeChannels = []string{"ch", "ch:o1", "ch:o2", "ch:"}

type nativeRun struct {
	history []byte
	dumps   string // every step's reply and both nodes' key spaces
	natives int    // scripts the master ran as twins
	ran     []int  // the twins each step ran
}

// differs describes how two runs differ, or is "".
func (a nativeRun) differs(b nativeRun) string {
	if a.dumps != b.dumps {
		return fmt.Sprintf("key spaces differ:\ntwins:\n%s\ntext:\n%s", a.dumps, b.dumps)
	}
	if !bytes.Equal(a.history, b.history) {
		return fmt.Sprintf("histories differ at byte %d:\ntwins:\n%s\ntext:\n%s", firstDiff(a.history, b.history), a.history, b.history)
	}
	return ""
}

// fataler is a *testing.T or a *rapid.T.
type fataler interface{ Fatal(args ...any) }

func runNativeSteps(rt fataler, mode setup.LuaMode, steps []nativeStep) nativeRun {
	w := sim.New(3)
	defer w.Close()
	m1, err := w.AddNode(setup.NodeConfig{Name: "m1", Lua: mode})
	if err != nil {
		rt.Fatal(err)
	}
	r1, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1", Lua: mode}, setup.ReplicaConfig{Lag: setup.Fixed(time.Millisecond)})
	if err != nil {
		rt.Fatal(err)
	}
	c, _ := w.AddClient(setup.ClientConfig{Name: "c1"})
	sub, _ := w.AddClient(setup.ClientConfig{Name: "sub"})
	conn, _ := c.Conn("m1")
	subConn, _ := sub.Conn("m1")
	var out strings.Builder
	var ran []int
	done := false
	for _, ch := range nativeChannels {
		sub.Go("sub "+ch, func() {
			s, err := subConn.Subscribe(context.Background(), ch)
			if err != nil {
				rt.Fatal(err)
			}
			for !done {
				msg, ok, err := s.Next(context.Background(), time.Second)
				if err != nil {
					rt.Fatal(err)
				}
				if ok {
					fmt.Fprintf(&out, "message %q on %s\n", msg, ch)
				}
			}
		})
	}
	rtm := c.Runtime()
	c.Go("steps", func() {
		ctx := context.Background()
		_ = rtm.Sleep(ctx, 10*time.Millisecond) // after the subscription
		for _, s := range steps {
			var v any
			var err error
			before := m1.NativeRuns()
			if s.script < 0 {
				v, err = conn.Do(ctx, s.cmd...)
			} else {
				v, err = conn.Eval(ctx, twinned[s.script].sc, s.keys, s.argv...)
			}
			ran = append(ran, m1.NativeRuns()-before)
			fmt.Fprintf(&out, "%s\n", render(v, err, false))
			_ = rtm.Sleep(ctx, 5*time.Millisecond) // replicated
			fmt.Fprintf(&out, "m1 %s\nr1 %s\n", dumpKeys(m1.Miniredis()), dumpKeys(r1.Miniredis()))
			_ = rtm.Sleep(ctx, s.wait)
		}
		done = true
	})
	if err := w.Run(time.Hour); err != nil {
		rt.Fatal(err)
	}
	w.Close()
	var buf bytes.Buffer
	_ = w.History().WriteJSONL(&buf)
	return nativeRun{history: buf.Bytes(), dumps: out.String(), natives: m1.NativeRuns(), ran: ran}
}

// dumpKeys renders a miniredis key space: every key in order with its
// type, TTL in ms, and value (a hash's fields in order).
func dumpKeys(m *miniredis.Miniredis) string {
	var b strings.Builder
	for _, k := range m.Keys() {
		fmt.Fprintf(&b, "%s:%s:%d=", k, m.Type(k), m.TTL(k).Milliseconds())
		switch m.Type(k) {
		case "string":
			v, _ := m.Get(k)
			fmt.Fprintf(&b, "%q", v)
		case "hash":
			fields, _ := m.HKeys(k)
			slices.Sort(fields)
			for _, f := range fields {
				fmt.Fprintf(&b, "%q:%q,", f, m.HGet(k, f))
			}
		case "list":
			l, _ := m.List(k)
			fmt.Fprintf(&b, "%q", l)
		case "zset":
			members, _ := m.ZMembers(k) // by score
			for _, mb := range members {
				sc, _ := m.ZScore(k, mb)
				fmt.Fprintf(&b, "%q:%s,", mb, strconv.FormatFloat(sc, 'g', -1, 64))
			}
		}
		b.WriteString(" ")
	}
	return b.String()
}

// TestNativeTwinsPinned: every twin is pinned to its script's current
// text. When a .lua file changes, its twin no longer runs (the new SHA1
// finds none) and this test fails until the twin is mended to the new text
// and re-pinned. It also requires twinned (the scripts the differential
// tests draw) to list exactly the twins.
func TestNativeTwinsPinned(t *testing.T) {
	pins := sim.TwinPins()
	if len(pins) != len(twinned) {
		t.Errorf("%d twins, %d scripts in twinned", len(pins), len(twinned))
	}
	for i, p := range pins {
		if p[1] != p[2] {
			t.Errorf("%s's twin is pinned to %s, the text is now %s: mend the twin (sim/native.go) to the new text and re-pin it", p[0], p[1], p[2])
		}
		if i < len(twinned) && twinned[i].sc.Name != p[0] {
			t.Errorf("twinned[%d] is %s, the twin is %s", i, twinned[i].sc.Name, p[0])
		}
	}
}
