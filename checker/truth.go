// Ground truth: the index of what the nodes held (Truth), which the
// silent-loss, reentrancy, resurrected-lock and unlock-idempotency oracles
// ask; and the silent-loss oracle, a holder's belief against it.

package checker

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/history"
)

// Truth indexes a history's node-side records: the topology, failovers, and
// every change of every key on every node, so that checkers can ask what a
// group's master said about a key at any instant.
type Truth struct {
	groupOf map[string]string          // node -> group
	masters map[string][]masterSpan    // group -> masters over time
	keyIdx  map[string]int32           // key -> its index in keys
	keys    []keyTruth                 // every key's changes
	failAt  map[string][]time.Duration // group -> failover times (sorted)
	recs    []history.Record
	ix      *recordIndex // recs' records by kind
	causes  lazyCauses   // recs' causes index (faultsBefore)
	// mastersUnsorted marks the groups whose masters are not in time
	// order, which Master then scans.
	mastersUnsorted map[string]bool
	// fieldIdx is fieldTimes' index, by key.
	fieldIdx map[string]map[string][]time.Duration
	// downs is, per node, its crashes and restarts in time order (history
	// order among equal times): whether it is down at an instant (downSince).
	downs map[string][]downChange
	// downAt is, per group, when a node that serves or served it crashed
	// or restarted (sorted): the instants at which the group's master may
	// go down or come back up without any change of a key.
	downAt map[string][]time.Duration
	// jumps is, per node, its clock's forward jumps in history order: a
	// key whose expiry a jump passed expires at once, sooner than its TTL
	// said, without a command (lossInstants).
	jumps map[string][]lossInstant
	// lossFaults are the failover, crash and restart records (their times
	// and indexes in the history), sorted: firstFaultOf.
	lossFaults []lossInstant
}

type masterSpan struct {
	from time.Duration
	node string
}

type truthChange struct {
	t   time.Duration
	rec *history.Record // nil for "gone"
	i   int32           // the record's index in the history
}

// keyTruth is what the truth records say of one key: the nodes that ever
// had it, each with its changes (sorted by node once NewTruth is done: a
// key is on a handful of nodes, found by a scan), every change's time on
// any node (sorted), whether some node's changes are out of time order
// (countBounds then asks every time), and the groups the key was in
// (Groups).
type keyTruth struct {
	nodes    []keyNode
	times    []time.Duration
	unsorted bool
	groups   []string
}

// keyNode is one node's changes of a key, in history order. count is how
// many there are, while NewTruth builds the index: it counts them first, so
// that the changes and times go into slices of the right size.
type keyNode struct {
	name    string
	count   int
	changes []truthChange
}

// truthRef is a truth record, h[rec], of the key keys[key] on that key's
// node nodes[node]: where NewTruth puts its change once it has counted
// them all.
type truthRef struct {
	key, node int32
	rec       int
}

// refer counts r, a truth record at h[i], against its key and node, and
// returns where its change goes. refs are the truth records before it: a
// key's changes come in runs (a write reaches the master, then its
// replicas), so a record of the previous one's key takes its index
// without a look-up of the key.
func (tr *Truth) refer(h []history.Record, refs []truthRef, r *history.Record, i int) truthRef {
	var k int32
	if n := len(refs); n > 0 && h[refs[n-1].rec].Key == r.Key {
		k = refs[n-1].key
	} else {
		var ok bool
		k, ok = tr.keyIdx[r.Key]
		if !ok {
			k = int32(len(tr.keys))
			tr.keyIdx[r.Key] = k
			tr.keys = append(tr.keys, keyTruth{})
		}
	}
	kt := &tr.keys[k]
	n := slices.IndexFunc(kt.nodes, func(kn keyNode) bool { return kn.name == r.Node })
	if n < 0 {
		n = len(kt.nodes)
		kt.nodes = append(kt.nodes, keyNode{name: r.Node})
	}
	kt.nodes[n].count++
	return truthRef{key: k, node: int32(n), rec: i}
}

// indexKeys puts the changes refs refer to (refer, in history order) into
// their keys: every key's changes and times are cut, at their counted
// sizes, from one slice of each, then each key is sorted (keyTruth.index).
func (tr *Truth) indexKeys(h []history.Record, refs []truthRef) {
	changes := make([]truthChange, len(refs))
	times := make([]time.Duration, len(refs))
	off := 0
	for k := range tr.keys {
		kt := &tr.keys[k]
		start := off
		for n := range kt.nodes {
			kn := &kt.nodes[n]
			kn.changes = changes[off : off : off+kn.count]
			off += kn.count
		}
		kt.times = times[start:start:off]
	}
	for _, ref := range refs {
		r := &h[ref.rec]
		c := truthChange{t: r.At(), rec: r, i: int32(ref.rec)}
		if r.Gone {
			c.rec = nil
		}
		kt := &tr.keys[ref.key]
		kn := &kt.nodes[ref.node]
		kn.changes = append(kn.changes, c)
		kt.times = append(kt.times, c.t)
	}
	one := map[string][]string{} // group -> a list of that group alone, which the keys in it share
	for k := range tr.keys {
		tr.keys[k].index(tr.groupOf, one)
	}
}

// index sorts what indexKeys put in kt (the nodes with their changes,
// and the times), and finds the groups, given each node's (groupOf). The
// keys of one group share one list of it (one): the oracles only read a
// key's groups.
func (kt *keyTruth) index(groupOf map[string]string, one map[string][]string) {
	// An insertion sort of the few nodes.
	for i := 1; i < len(kt.nodes); i++ {
		for j := i; j > 0 && kt.nodes[j].name < kt.nodes[j-1].name; j-- {
			kt.nodes[j], kt.nodes[j-1] = kt.nodes[j-1], kt.nodes[j]
		}
	}
	// Sorted, so that the oracles find the changes within a span by a
	// binary search; each use sorts what it takes anyway.
	slices.Sort(kt.times)
	for _, kn := range kt.nodes {
		if !slices.IsSortedFunc(kn.changes, func(a, b truthChange) int { return cmp.Compare(a.t, b.t) }) {
			kt.unsorted = true
		}
	}
	var groups []string
	for _, kn := range kt.nodes {
		g := groupOf[kn.name]
		if g == "" {
			g = kn.name
		}
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	if len(groups) == 1 {
		if shared, ok := one[groups[0]]; ok {
			groups = shared
		} else {
			one[groups[0]] = groups
		}
	}
	slices.Sort(groups)
	kt.groups = groups
}

// changesOn is the key's changes on node, in history order.
func (kt *keyTruth) changesOn(node string) []truthChange {
	for _, kn := range kt.nodes {
		if kn.name == node {
			return kn.changes
		}
	}
	return nil
}

// key is what the truth records say of key; nil when they say nothing.
func (tr *Truth) key(key string) *keyTruth {
	if k, ok := tr.keyIdx[key]; ok {
		return &tr.keys[k]
	}
	return nil
}

// keyTimes is every change time of key on any node, sorted.
func (tr *Truth) keyTimes(key string) []time.Duration {
	if kt := tr.key(key); kt != nil {
		return kt.times
	}
	return nil
}

// NewTruth indexes h.
func NewTruth(h []history.Record) *Truth { return newTruth(indexRecords(h)) }

// newTruth is NewTruth of ix's history, reading its world records.
func newTruth(ix *recordIndex) *Truth {
	h := ix.h
	tr := &Truth{ix: ix, groupOf: map[string]string{}, masters: map[string][]masterSpan{}, keyIdx: map[string]int32{},
		failAt: map[string][]time.Duration{}, recs: h, causes: lazyCauses{h: h},
		mastersUnsorted: map[string]bool{}, fieldIdx: map[string]map[string][]time.Duration{},
		downs: map[string][]downChange{}, downAt: map[string][]time.Duration{}, jumps: map[string][]lossInstant{}}
	refs := make([]truthRef, 0, len(ix.world)) // the truth records, counted against their keys (most of the world records)
	for _, i := range ix.world {
		r := &h[i]
		switch {
		case r.Kind == history.KindNode:
			tr.groupOf[r.Node] = r.Value
			if r.Op == history.RoleMaster {
				tr.masters[r.Value] = append(tr.masters[r.Value], masterSpan{r.At(), r.Node})
			}
		case r.Kind == history.KindFault && r.Op == history.FaultFailover && r.Value != "":
			tr.masters[r.Node] = append(tr.masters[r.Node], masterSpan{r.At(), r.Value})
			tr.failAt[r.Node] = append(tr.failAt[r.Node], r.At())
			tr.lossFaults = append(tr.lossFaults, lossInstant{r.At(), i})
		case r.Kind == history.KindFault && (r.Op == history.FaultCrash || r.Op == history.FaultRestart) && r.Node != "":
			tr.downs[r.Node] = append(tr.downs[r.Node], downChange{t: r.At(), down: r.Op == history.FaultCrash})
			tr.lossFaults = append(tr.lossFaults, lossInstant{r.At(), i})
		case r.Kind == history.KindFault && r.Op == history.FaultClockJump && r.Node != "" && forwardJump(r.Detail):
			tr.jumps[r.Node] = append(tr.jumps[r.Node], lossInstant{r.At(), i})
		case r.Kind == history.KindTruth:
			refs = append(refs, tr.refer(h, refs, r, i))
		}
	}
	tr.indexKeys(h, refs)
	for _, g := range slices.Sorted(maps.Keys(tr.failAt)) {
		slices.Sort(tr.failAt[g])
	}
	for _, g := range slices.Sorted(maps.Keys(tr.masters)) {
		if !slices.IsSortedFunc(tr.masters[g], func(a, b masterSpan) int { return cmp.Compare(a.from, b.from) }) {
			tr.mastersUnsorted[g] = true
		}
	}
	tr.indexDowns()
	slices.SortFunc(tr.lossFaults, byInstant)
	return tr
}

// forwardJump reports whether a clock-jump fault's Detail (the jump, as
// time.Duration prints it) moved the clock forward.
func forwardJump(detail string) bool {
	d, err := time.ParseDuration(detail)
	return err == nil && d > 0
}

// fieldTimes is, for key, when each hash field's value changed on any of
// its nodes (appeared, took another value, or went with the field or the
// key), sorted: between two of a field's times, every node's copy of it is
// constant. Made once per key, on the first question.
func (tr *Truth) fieldTimes(key string) map[string][]time.Duration {
	if ft, ok := tr.fieldIdx[key]; ok {
		return ft
	}
	ft := map[string][]time.Duration{}
	kt := tr.key(key)
	if kt == nil {
		kt = &keyTruth{}
	}
	for _, kn := range kt.nodes {
		var prev map[string]string
		for _, c := range kn.changes {
			var cur map[string]string
			if c.rec != nil {
				cur = c.rec.Fields
			}
			//detlint:allow maprange each field's list gets at most one time per change, and every list is sorted below
			for f, v := range prev {
				if now, ok := cur[f]; !ok || now != v {
					ft[f] = append(ft[f], c.t)
				}
			}
			//detlint:allow maprange as above
			for f := range cur {
				if _, ok := prev[f]; !ok {
					ft[f] = append(ft[f], c.t)
				}
			}
			prev = cur
		}
	}
	for _, f := range slices.Sorted(maps.Keys(ft)) {
		slices.Sort(ft[f])
	}
	tr.fieldIdx[key] = ft
	return ft
}

// faultsBefore is FaultsBefore(tr.recs, t, 5), from an index made once.
func (tr *Truth) faultsBefore(t time.Duration) []history.Record { return tr.causes.before(t) }

// within is the times of sorted (ascending) strictly between from and to.
func within(sorted []time.Duration, from, to time.Duration) []time.Duration {
	i := atOrBefore(sorted, from)
	j := i + strictlyBefore(sorted[i:], to)
	return sorted[i:j]
}

// Groups lists the groups in which key ever existed, sorted.
func (tr *Truth) Groups(key string) []string { return slices.Clone(tr.groups(key)) }

// groups is Groups without the copy: the index's own list, which the
// oracles only read.
func (tr *Truth) groups(key string) []string {
	if kt := tr.key(key); kt != nil {
		return kt.groups
	}
	return nil
}

// Master is the node serving group at t: the last of the group's masters
// (in history order) that took over at or before t.
func (tr *Truth) Master(group string, t time.Duration) string {
	spans := tr.masters[group]
	if !tr.mastersUnsorted[group] {
		// In time order: the last at or before t is found by a search.
		n := upTo(spans, t, func(s masterSpan) time.Duration { return s.from })
		if n == 0 {
			return group
		}
		return spans[n-1].node
	}
	m := group
	for _, s := range spans {
		if s.from <= t {
			m = s.node
		}
	}
	return m
}

// State is key's record on node at t (after every change at t), or nil
// when the key did not exist.
func (tr *Truth) State(node, key string, t time.Duration) *history.Record {
	return tr.stateBefore(node, key, t, math.MaxInt)
}

// stateBefore is key's record on node at t before the history's record
// seq: after every change before t, and the changes at t recorded before
// seq (nil when the key did not exist). A fault at the instant of a write
// (one triggered on the write's applied event) is recorded after it.
func (tr *Truth) stateBefore(node, key string, t time.Duration, seq int) *history.Record {
	var cs []truthChange
	if kt := tr.key(key); kt != nil {
		cs = kt.changesOn(node)
	}
	i := upTo(cs, t, func(c truthChange) time.Duration { return c.t })
	for i > 0 && cs[i-1].t == t && int(cs[i-1].i) >= seq {
		i--
	}
	if i == 0 {
		return nil
	}
	return cs[i-1].rec
}

// holderField is the hash field of a holder "client/owner": lock.Client ids
// are the client names in locksim's workloads, so the field is
// "client:owner".
func holderField(holder string) string { return strings.Replace(holder, "/", ":", 1) }

// Names reports whether a key state names the holding's holder: a string
// key holding its token, or a hash with its field (or its write field).
func Names(st *history.Record, h Holding) bool {
	if st == nil {
		return false
	}
	if st.Fields == nil {
		return h.Token != "" && st.Value == h.Token
	}
	// The field names are built in a buffer on the stack: a map index by
	// string(bytes) allocates nothing, and the silent-loss oracle asks
	// this of every group at every point of every holding.
	var buf [64]byte
	f := appendHolderField(buf[:0], h.Client)
	if _, ok := st.Fields[string(f)]; ok {
		return true
	}
	_, ok := st.Fields[string(append(f, ":write"...))]
	return ok
}

// appendHolderField appends holderField(holder) to b.
func appendHolderField(b []byte, holder string) []byte {
	if client, owner, ok := strings.Cut(holder, "/"); ok {
		return append(append(append(b, client...), ':'), owner...)
	}
	return append(b, holder...)
}

// namedBy counts the groups whose master names h at t.
func (tr *Truth) namedBy(h Holding, groups []string, t time.Duration) int {
	n := 0
	for _, g := range groups {
		if Names(tr.State(tr.Master(g, t), h.Lock, t), h) {
			n++
		}
	}
	return n
}

// SilentLosses reports, for every holding, the spans of its belief during
// which the nodes no longer gave the lock to its holder: the group's master,
// or for a lock kept on several groups (RedLock) a majority of them. A span
// is SilentLoss when another client could take the lock, and
// QuorumHeldByDown when it could not because the masters that forgot the
// holder were down (lossAt); a span that passes from one to the other is
// split there, so that each part is reported for what it is.
//
// The groups of a lock are those where its key ever appeared, so a RedLock
// node that never received the key (down from the start) is not counted:
// this errs towards reporting less loss, never more.
func (tr *Truth) SilentLosses(hs []Holding) []Violation { return tr.silentLosses(hs, nil) }

// silentLosses is SilentLosses spending w: a unit per group asked at each
// point of each holding. The points are the holding's start and every
// change of the lock's key, failover, crash and restart of its groups
// within it: between two of them, what lossAt answers is constant.
func (tr *Truth) silentLosses(hs []Holding, w *oracleWork) []Violation {
	var out []Violation
	for _, h := range hs {
		groups := tr.groups(h.Lock)
		if len(groups) == 0 || h.To <= h.From {
			continue
		}
		times := []time.Duration{h.From}
		times = append(times, within(tr.keyTimes(h.Lock), h.From, h.To)...)
		for _, g := range groups {
			times = append(times, within(tr.failAt[g], h.From, h.To)...)
			times = append(times, within(tr.downAt[g], h.From, h.To)...)
		}
		slices.Sort(times)
		times = slices.Compact(times)
		if !w.charge(int64(len(times)*len(groups)), h.From) {
			break
		}
		out = append(out, tr.lossSpans(h, groups, times, func(t time.Duration) loss { return tr.lossAt(h, groups, t) })...)
	}
	return out
}

// lossSpans is h's losses, asking at (lossAt) at each of times (sorted,
// the first h.From): a span runs from a point where the loss begins or
// changes to the next point where it ends or changes, the last to h.To.
func (tr *Truth) lossSpans(h Holding, groups []string, times []time.Duration, at func(time.Duration) loss) []Violation {
	var out []Violation
	var cur loss
	from := time.Duration(-1)
	flush := func(until time.Duration) {
		if from >= 0 && until > from {
			out = append(out, tr.lossViolation(h, groups, cur, from, until))
		}
		from = -1
	}
	for _, t := range times {
		l := at(t)
		if from >= 0 && l.same(cur) {
			continue
		}
		flush(t)
		if l.kind != "" {
			cur, from = l, t
		}
	}
	flush(h.To)
	return out
}

// describe says what the nodes held of h's lock at t, for a violation's
// Detail: the single group's master's key, or how many groups named h.
func (tr *Truth) describe(h Holding, groups []string, t time.Duration) string {
	if len(groups) == 1 {
		m := tr.Master(groups[0], t)
		st := tr.State(m, h.Lock, t)
		switch {
		case st == nil:
			return fmt.Sprintf("the master %s had no key", m)
		case st.Fields != nil:
			return fmt.Sprintf("the master %s named %v", m, slices.Sorted(maps.Keys(st.Fields)))
		}
		if h.Token == "" && st.Value == holderField(h.Client) {
			// The key holds the holder's own name as a string, but its
			// acquire named no token: a lock that marks its holder in the
			// key's value, judged as one that marks it as a hash field
			// (a script lock's owner_in: field where it should be value).
			return fmt.Sprintf("the master %s held %q, the holder's name, as the key's value (its acquire named no token: a lock that keeps its holder in the value is owner_in: value)", m, st.Value)
		}
		if h.Token == "" {
			// A string key, and an acquire that returned no mark to know
			// its holder by: whatever the key holds reads as another's.
			return fmt.Sprintf("the master %s held %q (the holder's acquire returned no value to know it by: a lock that marks its holder in a string key returns that mark, "+
				"a Go lock as Grant.Value, a script as ARGV[1] with owner_in: value)", m, st.Value)
		}
		return fmt.Sprintf("the master %s held %q", m, st.Value)
	}
	return fmt.Sprintf("only %d of %d groups named it", tr.namedBy(h, groups, t), len(groups))
}
