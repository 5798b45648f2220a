package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2/fpconv"
	"github.com/locksim/locksim/setup"
)

// fastCmdGen draws commands for TestFastCommandsMatchDispatch: the shapes
// the short way takes and, as often, the ones it must leave to Dispatch
// (wrong arity, wrong type, options it does not parse, numbers that do not
// parse or are not positive, empty hash values, several fields).
type fastCmdGen struct{ r *rand.Rand }

func (g fastCmdGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g fastCmdGen) pick2(xs ...[]string) []string { return xs[g.r.IntN(len(xs))] }

func (g fastCmdGen) key() string   { return g.pick("a", "b", "h", "s", "l", "z") }
func (g fastCmdGen) field() string { return g.pick("f", "g", "") }
func (g fastCmdGen) value() string { return g.pick("1", "x", "", "-3", "41", "9223372036854775807") }
func (g fastCmdGen) ms() string    { return g.pick("100", "1500", "3000", "0", "-1", "abc", "2500") }

func (g fastCmdGen) command() []string {
	c := []string{}
	switch g.r.IntN(20) {
	case 0:
		c = append(c, g.pick("GET", "get"), g.key())
		if g.r.IntN(8) == 0 {
			c = c[:1]
		}
	case 1, 2:
		c = append(c, g.pick("SET", "set"), g.key(), g.value())
		for i := g.r.IntN(4); i > 0; i-- {
			switch g.r.IntN(9) {
			case 0:
				c = append(c, g.pick("NX", "nx"))
			case 1:
				c = append(c, "XX")
			case 2:
				c = append(c, g.pick("GET", "Get"))
			case 3, 4:
				c = append(c, g.pick("PX", "px"), g.ms())
			case 5:
				c = append(c, "EX", g.pick("1", "2", "0", "x"))
			case 6:
				c = append(c, "KEEPTTL")
			case 7:
				c = append(c, "PXAT", "5")
			case 8:
				c = append(c, "BOGUS")
			}
		}
		if g.r.IntN(10) == 0 {
			c = c[:2]
		}
	case 3:
		c = append(c, "DEL")
		for i := g.r.IntN(3); i >= 0; i-- {
			c = append(c, g.key())
		}
		if g.r.IntN(10) == 0 {
			c = c[:1]
		}
	case 4:
		c = append(c, g.pick("EXISTS", "exists"))
		for i := g.r.IntN(3); i >= 0; i-- {
			c = append(c, g.key())
		}
	case 5, 6:
		c = append(c, g.pick("PEXPIRE", "pexpire"), g.key(), g.ms())
		if g.r.IntN(6) == 0 {
			c = append(c, g.pick("NX", "XX", "GT"))
		}
	case 7:
		c = append(c, "PTTL", g.key())
	case 8:
		c = append(c, g.pick("HGET", "hget"), g.key(), g.field())
	case 9:
		c = append(c, g.pick("HEXISTS", "hexists"), g.key(), g.field())
	case 10, 11:
		c = append(c, g.pick("HINCRBY", "hincrby"), g.key(), g.field(), g.pick("1", "-1", "0", "abc", "5"))
	case 12:
		c = append(c, g.pick("HSET", "hset"), g.key(), g.field(), g.value())
		if g.r.IntN(4) == 0 {
			c = append(c, g.field(), g.value())
		}
	case 13:
		c = append(c, "PUBLISH", g.pick("ch", "other"), g.value())
	case 14:
		c = append(c, "HDEL", g.key(), g.field())
	case 15:
		c = append(c, "INCR", g.key())
	case 16: // a list (l, mostly), for LINDEX
		c = append(c, "RPUSH", g.pick("l", "l", g.key()), g.field())
	case 17: // a sorted set (z, mostly), for ZSCORE
		c = append(c, "ZADD", g.pick("z", "z", g.key()), g.pick("1", "0", "-0", "-3", "1.5", "inf", "-inf", "1e300", "1700000012345", "0.1"), g.field())
	case 18:
		c = append(c, g.pick("LINDEX", "lindex"), g.pick("l", g.key()), g.pick("0", "1", "-1", "-2", "5", "-0", "x", "+1", "01"))
	case 19:
		c = append(c, g.pick("ZSCORE", "zscore"), g.pick("z", g.key()), g.field())
	}
	if g.r.IntN(20) == 0 {
		c = append(c, "extra")
	}
	return c
}

// TestFastCommandsMatchDispatch runs random command sequences on two
// masters at the same instants, one taking the short way of fastcmd.go and
// one with every command through miniredis's Dispatch, directly (half the
// time), by redis.pcall from a script (a quarter), or two commands by one
// script (a quarter: the second may read or write a key the first wrote),
// and
// requires after every command equal replies and errors, equal databases (values and TTLs), equal truth
// and equal replication offsets (the same writes propagated). It also
// requires that most commands took the short way, so that it compares
// something.
func TestFastCommandsMatchDispatch(t *testing.T) {
	const viaScript = "return redis.pcall(unpack(ARGV))"
	const viaScriptTwo = "local n = tonumber(ARGV[1]); " +
		"return {redis.pcall(unpack(ARGV, 2, n + 1)), redis.pcall(unpack(ARGV, n + 2))}"
	totalFast, total := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		w := New(seed)
		fa, err := w.AddNode(setup.NodeConfig{Name: "fa"})
		if err != nil {
			t.Fatal(err)
		}
		sl, err := w.AddNode(setup.NodeConfig{Name: "sl"})
		if err != nil {
			t.Fatal(err)
		}
		g := fastCmdGen{rand.New(rand.NewPCG(seed, 7))}
		at := time.Duration(0)
		var failure error
		for step := 0; step < 300; step++ {
			at += time.Duration(g.r.IntN(4)) * 500 * time.Millisecond
			cmd := g.command()
			switch g.r.IntN(4) {
			case 0, 1:
				cmd = append([]string{"EVAL", viaScript, "0"}, cmd...)
			case 2:
				// Two commands in one script: the second may read
				// a key the first wrote in the same command.
				second := g.command()
				switch g.r.IntN(4) {
				case 0:
					// A change of a hash's fields, then a read of
					// the field.
					cmd = []string{"HDEL", "h", g.field()}
					if g.r.IntN(2) == 0 {
						cmd = []string{"HSET", "h", g.field(), g.value()}
					}
					second = []string{g.pick("HEXISTS", "HGET"), "h", cmd[2]}
				case 1:
					// A SET or DEL, then another write of the key.
					k := g.key()
					cmd = []string{"SET", k, g.value(), "PX", g.ms()}
					switch g.r.IntN(3) {
					case 0:
						cmd = cmd[:3]
					case 1:
						cmd = []string{"DEL", k}
					}
					second = g.pick2(
						[]string{"SET", k, g.value(), "NX"},
						[]string{"SET", k, g.value(), "NX", "PX", g.ms()},
						[]string{"PEXPIRE", k, g.ms()},
						[]string{"DEL", k},
						[]string{"HSET", k, g.field(), g.value()},
						[]string{"INCR", k})
				}
				cmd = append(append([]string{"EVAL", viaScriptTwo, "0", fmt.Sprint(len(cmd))}, cmd...), second...)
			}
			step := step
			must(t, w.At(at, func() {
				if failure != nil {
					return
				}
				before := fa.fastHits
				v1, e1 := fa.exec("c", slices.Clone(cmd))
				noFastCommands = true
				v2, e2 := sl.exec("c", slices.Clone(cmd))
				noFastCommands = false
				if fa.fastHits > before {
					totalFast++
				}
				total++
				where := fmt.Sprintf("seed %d step %d %q", seed, step, cmd)
				if !reflect.DeepEqual(v1, v2) || fmt.Sprint(e1) != fmt.Sprint(e2) {
					failure = fmt.Errorf("%s: short way %#v, %v; Dispatch %#v, %v", where, v1, e1, v2, e2)
					return
				}
				if s1, s2 := fa.snapshot(), sl.snapshot(); !reflect.DeepEqual(s1, s2) {
					failure = fmt.Errorf("%s: databases differ:\nshort way %+v\nDispatch  %+v", where, s1, s2)
					return
				}
				if !reflect.DeepEqual(fa.truth, sl.truth) || fa.offset != sl.offset {
					failure = fmt.Errorf("%s: truth or offset differ: %+v (%d) vs %+v (%d)", where, fa.truth, fa.offset, sl.truth, sl.offset)
				}
			}))
		}
		must(t, w.Run(at+time.Second))
		w.Close()
		if failure != nil {
			t.Fatal(failure)
		}
		if fa.exotic {
			t.Fatalf("seed %d: the generator ran a command that ends the short way", seed)
		}
	}
	if totalFast*3 < total {
		t.Fatalf("only %d of %d commands took the short way", totalFast, total)
	}
	t.Logf("%d of %d commands took the short way", totalFast, total)
}

// TestFastCommandsOffAfterExotic: once a command outside the commands
// table has run (MULTI here), the node leaves every command to Dispatch: a
// GET inside the transaction is queued, not answered by the short way.
func TestFastCommandsOffAfterExotic(t *testing.T) {
	w := New(1)
	defer w.Close()
	n, err := w.AddNode(setup.NodeConfig{Name: "m"})
	must(t, err)
	must(t, w.At(0, func() {
		if v, err := n.exec("c", []string{"SET", "k", "v"}); err != nil || v != "OK" {
			t.Errorf("SET: %v %v", v, err)
		}
		if n.fastHits != 1 {
			t.Errorf("SET did not take the short way (%d)", n.fastHits)
		}
		if _, err := n.exec("c", []string{"MULTI"}); err != nil {
			t.Errorf("MULTI: %v", err)
		}
		v, err := n.exec("c", []string{"GET", "k"})
		if err != nil || v != "QUEUED" {
			t.Errorf("GET in MULTI = %#v, %v; want QUEUED", v, err)
		}
		if !n.exotic || n.fastHits != 1 {
			t.Errorf("exotic %v, fast hits %d after MULTI", n.exotic, n.fastHits)
		}
	}))
	must(t, w.Run(time.Second))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestScoreTextMemo: scoreText answers fpconv.Dtoa of every score, whether
// it is kept or not, for a run of scores that cycles through more than
// the memo holds and comes back to each (a kept text given for another
// score would fail it).
func TestScoreTextMemo(t *testing.T) {
	var n Node
	scores := []float64{1767225609009, 1767225611009.5, -3, 1e300, 0.1, 1767225609009, 42, 1767225611009.5, -3, 7, 0.1, 1e300}
	for round := 0; round < 3; round++ {
		for _, sc := range scores {
			if got, want := n.scoreText(sc), fpconv.Dtoa(sc); got != want {
				t.Fatalf("scoreText(%v) = %q, want %q", sc, got, want)
			}
		}
	}
}
