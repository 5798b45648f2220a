// Which masters are down, and what a holder's loss lets in: the
// silent-loss oracle's classification of a holder that fewer than a
// majority of its groups' masters name (SilentLoss or QuorumHeldByDown).

package checker

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// downChange is a crash (down) or a restart of a node at t.
type downChange struct {
	t    time.Duration
	down bool
}

// indexDowns sorts each node's crashes and restarts by time (stably: the
// history's order decides between equal times) and files their times
// under every group the node serves or served: its own (a node record's
// group, or its name), and each group that failed over to it.
func (tr *Truth) indexDowns() {
	served := map[string][]string{} // node -> groups
	for _, g := range slices.Sorted(maps.Keys(tr.masters)) {
		for _, s := range tr.masters[g] {
			served[s.node] = append(served[s.node], g)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(tr.downs)) {
		slices.SortStableFunc(tr.downs[n], func(a, b downChange) int { return cmp.Compare(a.t, b.t) })
		own := tr.groupOf[n]
		if own == "" {
			own = n
		}
		gs := append([]string{own}, served[n]...)
		slices.Sort(gs)
		for _, g := range slices.Compact(gs) {
			for _, c := range tr.downs[n] {
				tr.downAt[g] = append(tr.downAt[g], c.t)
			}
		}
	}
	for _, g := range slices.Sorted(maps.Keys(tr.downAt)) {
		slices.Sort(tr.downAt[g])
		tr.downAt[g] = slices.Compact(tr.downAt[g])
	}
}

// downSince reports whether node is down at t, after every crash and
// restart at t (its last one at or before t is a crash), and when that
// crash was.
func (tr *Truth) downSince(node string, t time.Duration) (time.Duration, bool) {
	cs := tr.downs[node]
	i := upTo(cs, t, func(c downChange) time.Duration { return c.t })
	if i == 0 || !cs[i-1].down {
		return 0, false
	}
	return cs[i-1].t, true
}

// downMaster is a group's master that was down, crashed at since.
type downMaster struct {
	node  string
	since time.Duration
}

// loss is what the nodes gave a holder at an instant: kind "" when a
// majority of its groups' masters named it; otherwise SilentLoss or
// QuorumHeldByDown, with the masters of the groups that did not name it,
// down (with their crashes) and up.
type loss struct {
	kind Kind
	down []downMaster
	up   []string
}

// same reports whether l and o are one finding: the same kind, and for
// QuorumHeldByDown the same masters down and up, which its text names. A
// SilentLoss is one however its masters change, as it was before down
// masters were told apart.
func (l loss) same(o loss) bool {
	if l.kind != o.kind {
		return false
	}
	return l.kind != QuorumHeldByDown || (slices.Equal(l.down, o.down) && slices.Equal(l.up, o.up))
}

// lossAt is what the masters of groups gave h at t. Another client can
// take the lock when the masters up without h's key are a majority: those
// answer its acquire (a key of another holder there only expires sooner or
// later), and that is SilentLoss. When they are fewer than a majority
// because some of the others' masters are down, nobody else can gather a
// majority while those stay down: QuorumHeldByDown. A master that is down
// but still names h (its persistence kept the key, which it loads again on
// restart) counts as naming h, as before. A tie with no master down (an
// even number of groups, half of them naming h) stays SilentLoss: no node
// being down is its reason.
func (tr *Truth) lossAt(h Holding, groups []string, t time.Duration) loss {
	return tr.lossWith(h, groups, t, tr.Master, tr.downSince)
}

// lossWith is lossAt asking master which node served a group at t and
// down whether a node was down then (the indexed lookups, or the
// reference scans of the tests).
func (tr *Truth) lossWith(h Holding, groups []string, t time.Duration,
	master func(string, time.Duration) string, down func(string, time.Duration) (time.Duration, bool)) loss {
	quorum := len(groups)/2 + 1
	named := 0
	var l loss
	for _, g := range groups {
		m := master(g, t)
		if Names(tr.State(m, h.Lock, t), h) {
			named++
			continue
		}
		if since, ok := down(m, t); ok {
			l.down = append(l.down, downMaster{m, since})
			continue
		}
		l.up = append(l.up, m)
	}
	switch {
	case named >= quorum:
		return loss{}
	case len(l.up) >= quorum || len(l.down) == 0:
		return loss{kind: SilentLoss}
	}
	l.kind = QuorumHeldByDown
	return l
}

// lossViolation is the violation of h's loss l from from to until: what
// the nodes held (describe), and for QuorumHeldByDown which masters were
// down since when, and why nobody else could take the lock.
func (tr *Truth) lossViolation(h Holding, groups []string, l loss, from, until time.Duration) Violation {
	detail := fmt.Sprintf("%s believed it held the lock while %s", h.Client, tr.describe(h, groups, from))
	if then := tr.describeChange(h, groups, from, until); then != "" {
		detail += "; " + then
	}
	if l.kind == QuorumHeldByDown {
		detail += "; " + heldByDown(l, len(groups))
	}
	return Violation{Kind: l.kind, Lock: h.Lock, Holders: []string{h.Client}, From: from, To: until, Detail: detail,
		Faults: tr.faultsBefore(from)}
}

// describeChange says what a single group's master held of h's lock at
// the first change within (from, until) that reads differently from what
// it held at from: "from 1.051s the master m1 held "c2-…"", so that a span that
// began with no key and went on while another holder took the lock names
// that holder. "" when nothing changed, or for several groups.
func (tr *Truth) describeChange(h Holding, groups []string, from, until time.Duration) string {
	if len(groups) != 1 {
		return ""
	}
	m0 := tr.Master(groups[0], from)
	st0 := tr.State(m0, h.Lock, from)
	d0 := ""
	for _, t := range within(tr.keyTimes(h.Lock), from, until) {
		if t <= from { // within starts at the point at or before from
			continue
		}
		// Compared as states, described only when the state changed: a
		// long span passes many points, and a description is a string
		// made. A change the description does not show (a renewed
		// expiry, a hold count) is not one to name: "while the master r1
		// named [c3:main]; from 18.15s the master r1 named [c3:main]"
		// reads as a repetition.
		m := tr.Master(groups[0], t)
		st := tr.State(m, h.Lock, t)
		if m == m0 && sameKeyState(st, st0) {
			continue
		}
		if d0 == "" {
			d0 = tr.describe(h, groups, from)
		}
		if d := tr.describe(h, groups, t); d != d0 {
			return fmt.Sprintf("from %v %s", t, d)
		}
		m0, st0 = m, st
	}
	return ""
}

// heldByDown says which masters were down and why that kept every other
// client out: "n2 and n3 were down (crashed at 1s), and only n4 and n5
// were up without its key, fewer than a majority (3 of 5): no other client
// could take the lock while n2 and n3 stayed down".
func heldByDown(l loss, groups int) string {
	var names []string
	for _, d := range l.down {
		names = append(names, d.node)
	}
	s := fmt.Sprintf("%s %s down (%s)", andList(names), wasWere(len(names)), crashedAt(l.down))
	if groups > 1 {
		switch len(l.up) {
		case 0:
			s += ", and no group was up without its key"
		default:
			s += fmt.Sprintf(", and only %s %s up without its key, fewer than a majority (%d of %d)", andList(l.up), wasWere(len(l.up)), groups/2+1, groups)
		}
	}
	return s + fmt.Sprintf(": no other client could take the lock while %s stayed down", andList(names))
}

// crashedAt is when the down masters crashed: "crashed at 1s", or, when
// their times differ, each time with the masters that crashed then, in
// time order ("n2 and n3 crashed at 1s, n4 at 3s").
func crashedAt(down []downMaster) string {
	var times []time.Duration
	for _, d := range down {
		times = append(times, d.since)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	if len(times) == 1 {
		return fmt.Sprintf("crashed at %v", times[0])
	}
	var parts []string
	for i, t := range times {
		var names []string
		for _, d := range down {
			if d.since == t {
				names = append(names, d.node)
			}
		}
		verb := " "
		if i == 0 {
			verb = " crashed "
		}
		parts = append(parts, fmt.Sprintf("%s%sat %v", andList(names), verb, t))
	}
	return strings.Join(parts, ", ")
}

// counted is "1 hold", "2 holds": n of noun, plural but for one.
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// wasWere is the verb for n things.
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// andList joins names as prose: "n2", "n2 and n3", "n2, n3 and n4".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
