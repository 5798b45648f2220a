package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
)

// TestMatchesUndecided: an Unknown verdict (Porcupine gave up) cannot show
// that linearizability is absent, but does not hide other kinds.
func TestMatchesUndecided(t *testing.T) {
	var v checker.Verdict
	v.Undecided("search timed out", checker.Linearizability)
	if ok, why := (Expect{Absent: []checker.Kind{checker.Linearizability}}).Matches(v); ok || !strings.Contains(why, "linearizability undecided: search timed out") {
		t.Errorf("absent linearizability on an unknown verdict: %v %q", ok, why)
	}
	if ok, why := (Expect{Absent: []checker.Kind{checker.MutualExclusion}}).Matches(v); !ok {
		t.Errorf("absent mutual-exclusion on an unknown verdict: %q", why)
	}
	if ok, _ := (Expect{}).Matches(v); ok {
		t.Error("expect ok matched an unknown verdict")
	}
	if ok, why := (Expect{Rates: []RateBound{{Kind: checker.MutualExclusion, Max: 1}}, Seeds: 50}).Matches(checker.Verdict{}); ok || !strings.Contains(why, "sweep of seeds (50 by default)") {
		t.Errorf("a rate expectation matched one verdict: %q", why)
	}
}

// TestMatchesNeverHeld: a verdict Unknown because the lock was never held
// (every answered acquire ended in an error), or never released, meets
// no absent list: the run never exercised the lock, and every check
// passed for nothing. A budget's Unknown still meets an absent list that
// names only kinds its checks decided (TestMatchesUndecided).
func TestMatchesNeverHeld(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(v *checker.Verdict)
	}{
		{"never held", func(v *checker.Verdict) { v.NeverHeld = true }},
		{"never released", func(v *checker.Verdict) { v.NeverReleased = true }},
	} {
		var v checker.Verdict
		v.Undecided("lock lk " + c.name)
		c.set(&v)
		if ok, why := (Expect{Absent: []checker.Kind{checker.MutualExclusion}}).Matches(v); ok || !strings.Contains(why, "never exercised the lock: lock lk "+c.name) {
			t.Errorf("%s: absent mutual-exclusion matched: %v %q", c.name, ok, why)
		}
		if ok, _ := (Expect{Any: true}).Matches(v); !ok {
			t.Errorf("%s: expect any did not match", c.name)
		}
	}
}

// TestJudgeSweep: rates are fractions of the seeds whose verdict has the
// kind, judged on the observed rate.
func TestJudgeSweep(t *testing.T) {
	viol := func(ks ...checker.Kind) checker.Verdict {
		var v checker.Verdict
		for _, k := range ks {
			v.Add(checker.Violation{Kind: k})
		}
		return v
	}
	var unknown checker.Verdict
	unknown.Undecided("timeout")
	vs := []checker.Verdict{viol(checker.MutualExclusion, checker.SilentLoss), viol(checker.MutualExclusion), {}, unknown}
	e := Expect{Seeds: 4, Rates: []RateBound{{Kind: checker.MutualExclusion, Min: 0.5, Max: 1}, {Kind: checker.StaleWrite, Max: 0}}}
	out := e.JudgeSweep(vs)
	if !out.Match || out.Seeds != 4 || out.Violated != 2 || out.Undecided != 1 {
		t.Fatalf("sweep %+v", out)
	}
	var got []string
	for _, r := range out.Rates {
		got = append(got, string(r.Kind)+"="+pct(r.Rate()))
	}
	if want := "violated=50.0% mutual-exclusion=50.0% silent-loss=25.0% stale-write=0.0%"; strings.Join(got, " ") != want {
		t.Fatalf("rates %s, want %s", strings.Join(got, " "), want)
	}
	e.Rates[0].Min = 0.75
	if out := e.JudgeSweep(vs); out.Match || out.Why != "mutual-exclusion in 50.0% of seeds, below the minimum 75.0%" || out.Rates[1].OK {
		t.Fatalf("min not reached: %+v", out)
	}
	e = Expect{Seeds: 4, Rates: []RateBound{{Kind: AnyViolation, Max: 0.25}}}
	if out := e.JudgeSweep(vs); out.Match || out.Why != "violated in 50.0% of seeds, above the maximum 25.0%" {
		t.Fatalf("max exceeded: %+v", out)
	}
}

// TestParseExpect: the forms of expect, and String's rendering of each.
func TestParseExpect(t *testing.T) {
	for _, c := range []struct{ expect, str string }{
		{"expect: ok", "ok"},
		{"expect: any", "any"},
		{"expect: {absent: [silent-loss]}", "absent [silent-loss]"},
		{"expect: {violated: [mutual-exclusion], absent: [stale-write], liveness: 15s}", "violated [mutual-exclusion] absent [stale-write] liveness<=15s"},
		{"expect: {liveness: {c2: {min: 1s}, c1: {min: 1s, max: 2s}}}", "ok c2 waits>=1s c1 waits 1s-2s"},
		{"expect: {violated: [liveness], liveness: {c1: 5s}}", "violated [liveness] c1 waits<=5s"},
		// The lock's bound and the clients' together, in either order.
		{"expect: {liveness: {lock: 5s, c2: {min: 1s, max: 2s}}}", "ok liveness<=5s c2 waits 1s-2s"},
		{"expect: {violated: [liveness], liveness: {c1: 3s, lock: 4s}}", "violated [liveness] liveness<=4s c1 waits<=3s"},
		{"expect: {liveness: {lock: 5s}}", "ok liveness<=5s"},
		{"expect: {fencing: {rejected: {min: 1}, stale_accepted: 0, accepted: {max: 9}}}", "ok fencing accepted<=9 rejected>=1 stale_accepted=0"},
		{"expect: {rates: {mutual-exclusion: {min: 0.5}, violated: {max: 0.9}, silent-loss: 0}, seeds: 200}",
			"rates [mutual-exclusion >= 50.0%, violated <= 90.0%, silent-loss = 0.0%] over 200 seeds"},
		{"expect: {rates: {liveness: {min: 0.1, max: 0.2}}, seeds: 10, liveness: {c1: 3s}}", "rates [liveness 10.0%-20.0%] over 10 seeds c1 waits<=3s"},
		{"expect: {rates: {liveness: 0.5}, seeds: 10, liveness: {lock: 2s, c1: 3s}}", "rates [liveness = 50.0%] over 10 seeds liveness<=2s c1 waits<=3s"},
	} {
		s, err := Parse("e.yaml", []byte(strings.Replace(good, "expect: ok", c.expect, 1)))
		if err != nil {
			t.Errorf("%s: %v", c.expect, err)
			continue
		}
		if got := s.Expect.String(); got != c.str {
			t.Errorf("%s: String %q, want %q", c.expect, got, c.str)
		}
	}
}

// TestBadExpect: every bad expectation names the file, line and field.
func TestBadExpect(t *testing.T) {
	for _, c := range []struct{ expect, want string }{
		{"expect: {rates: {mutual-exclusion: {min: 0.5}}}", "bad.yaml:18: expect.seeds: required with rates"},
		{"expect: {seeds: 10}", "bad.yaml:18: expect.seeds: seeds is the size of the sweep that judges rates"},
		{"expect: {rates: {mutual-exclusion: 0.5}, seeds: 10, violated: [silent-loss]}", "bad.yaml:18: expect.violated: judges one run, rates judge a sweep"},
		{"expect: {rates: {mutual-exclusion: 0.5}, seeds: 10, fencing: {rejected: 1}}", "bad.yaml:18: expect.fencing: judges one run"},
		{"expect: {rates: {mutual-exclusion: 0.5}, seeds: 10, liveness: {c1: {min: 1s}}}", "bad.yaml:18: expect.liveness.c1: min judges one run"},
		{"expect: {rates: {deadlock: 0.5}, seeds: 10}", "bad.yaml:18: expect.rates.deadlock: unknown violation kind"},
		{"expect: {rates: {silent-loss: 1.5}, seeds: 10}", "bad.yaml:18: expect.rates.silent-loss: 1.5 out of range [0, 1]"},
		{"expect: {rates: {silent-loss: {min: 0.6, max: 0.5}}, seeds: 10}", "bad.yaml:18: expect.rates.silent-loss.min: 0.6 is above max 0.5"},
		{"expect: {rates: {silent-loss: {}}, seeds: 10}", "bad.yaml:18: expect.rates.silent-loss: give min, max or both"},
		{"expect: {rates: {}, seeds: 10}", "bad.yaml:18: expect.rates: give at least one kind"},
		{"expect: {rates: {silent-loss: 0.1}, seeds: 0}", "bad.yaml:18: expect.seeds: 0 out of range"},
		{"expect: {liveness: 0s}", "bad.yaml:18: expect.liveness: must be positive"},
		{"expect: {liveness: {c9: 1s}}", "bad.yaml:18: expect.liveness.c9: unknown client \"c9\" (the clients are c1, c2); liveness is a duration, or a mapping of client names to bounds, with lock for the lock's bound"},
		{"expect: {liveness: {c1: 1s, lock: 0s}}", "bad.yaml:18: expect.liveness.lock: must be positive"},
		{"expect: {liveness: {lock: soon}}", "bad.yaml:18: expect.liveness.lock: bad duration \"soon\""},
		{"expect: {liveness: {lock: {max: 5s}}}", "bad.yaml:18: expect.liveness.lock: want a duration: the longest the lock may stay free while a client waits"},
		{"expect: {liveness: {lock: 5s, c1: 1s, lock: 6s}}", "bad.yaml:18: expect.liveness.lock: given twice"},
		{"expect:\n  liveness:\n    c1: 1s\n    lock: 0s", "bad.yaml:21: expect.liveness.lock: must be positive"},
		{"expect: {liveness: {c1: {min: 3s, max: 2s}}}", "bad.yaml:18: expect.liveness.c1.min: 3s is above max 2s"},
		{"expect: {liveness: {c1: {}}}", "bad.yaml:18: expect.liveness.c1: give min, max or both"},
		{"expect: {liveness: {c1: 0s}}", "bad.yaml:18: expect.liveness.c1: a bound must be positive"},
		{"expect: {fencing: {stale: 1}}", "bad.yaml:18: expect.fencing.stale: unknown field (want one of accepted, rejected, stale_accepted)"},
		{"expect: {fencing: {rejected: -1}}", "bad.yaml:18: expect.fencing.rejected: -1 out of range"},
		{"expect: {fencing: {rejected: {min: 3, max: 2}}}", "bad.yaml:18: expect.fencing.rejected.min: 3 is above max 2"},
		{"expect: {fencing: {}}", "bad.yaml:18: expect.fencing: give at least one of accepted, rejected, stale_accepted"},
		{"expect: {liveness: {}}", "bad.yaml:18: expect.liveness: give the lock's bound (lock: DURATION), a client's or both (the clients are "},
		{"expect: {absent: [silent-loss, silent-loss]}", "bad.yaml:18: expect.absent[1]: silent-loss listed twice"},
		{"expect: {violated: [silent-loss], absent: [silent-loss]}", "bad.yaml:18: expect.absent[0]: silent-loss is both violated and absent"},
	} {
		_, err := Parse("bad.yaml", []byte(strings.Replace(good, "expect: ok", c.expect, 1)))
		var e *Error
		if err == nil || !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n  got  %v\n  want %s", c.expect, err, c.want)
		}
	}
	// A client named lock: the key would read as either, so it is refused.
	src := strings.Replace(good, "  - {count: 2, retry: go-redis, timeout: 500ms}", "  - {name: lock}\n  - {name: c1}", 1)
	if _, err := Parse("lock.yaml", []byte(strings.Replace(src, "expect: ok", "expect: {liveness: {lock: 5s}}", 1))); err == nil ||
		err.Error() != "lock.yaml:19: expect.liveness.lock: a client is named lock, and lock here is the lock's bound: rename the client to bound its wait" {
		t.Errorf("a client named lock: %v", err)
	}
	if _, err := Parse("lock.yaml", []byte(strings.Replace(src, "expect: ok", "expect: {liveness: {c1: 5s}}", 1))); err != nil {
		t.Errorf("a client named lock, liveness without the key: %v", err)
	}
}

// TestExpectUnknownKeyAlone: an unknown key of an expectation's mapping is
// its one error: the checks of which keys the mapping has ("give at least
// one of", "give min, max or both", "a bound must be positive") are left
// unmade, as the key may be a misspelled one of them; an empty mapping
// still gets them.
func TestExpectUnknownKeyAlone(t *testing.T) {
	for _, c := range []struct{ expect, want string }{
		{"expect: {fencing: {bogus: 1}}", "bad.yaml:18: expect.fencing.bogus: unknown field (want one of accepted, rejected, stale_accepted)"},
		{"expect: {fencing: {rejected: {mni: 1}}}", "bad.yaml:18: expect.fencing.rejected.mni: unknown field: did you mean min? (want one of min, max)"},
		{"expect: {liveness: {c1: {mni: 1s}}}", "bad.yaml:18: expect.liveness.c1.mni: unknown field: did you mean min? (want one of min, max)"},
		{"expect: {liveness: {c1: {min: 0s, mxa: 1s}}}", "bad.yaml:18: expect.liveness.c1.mxa: unknown field: did you mean max? (want one of min, max)"},
		{"expect: {rates: {bogus: 0.1}, seeds: 10}", "bad.yaml:18: expect.rates.bogus: unknown violation kind (want one of "},
		{"expect: {rates: {silent-loss: {mni: 0.1}}, seeds: 10}", "bad.yaml:18: expect.rates.silent-loss.mni: unknown field: did you mean min? (want one of min, max)"},
	} {
		_, err := Parse("bad.yaml", []byte(strings.Replace(good, "expect: ok", c.expect, 1)))
		if lines := errorLines(err); len(lines) != 1 || !strings.HasPrefix(lines[0], c.want) {
			t.Errorf("%s:\n  got  %v\n  want the one error %s", c.expect, err, c.want)
		}
	}
}

// TestReal: the real block is read as written (its scale is not scaled
// with the file's durations), and a bad one names the file, line and field.
func TestReal(t *testing.T) {
	s, err := ParseScaled("r.yaml", []byte(good+"real: {scale: 0.5, note: needs a longer first hold}\n"), 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Real.Scale != 0.5 || s.Real.Note != "needs a longer first hold" {
		t.Fatalf("Real = %+v", s.Real)
	}
	for _, c := range []struct{ real, want string }{
		{"real: {scale: 0}", "bad.yaml:19: real.scale: 0 out of range [0.01, 100]"},
		{"real: {scale: fast}", "bad.yaml:19: real.scale: want a number"},
		{"real: {engine: sentinel}", "bad.yaml:19: real.engine: unknown field"},
	} {
		_, err := Parse("bad.yaml", []byte(good+c.real+"\n"))
		var e *Error
		if err == nil || !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n  got  %v\n  want %s", c.real, err, c.want)
		}
	}
}
