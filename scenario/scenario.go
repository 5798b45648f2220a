// Package scenario reads locksim's scenario files (YAML, documented in
// scenarios/README.md, beside the committed files, which package scenarios
// embeds), starts the workload each describes on a backend's clients, and
// checks and judges a run's history against the verdict the file expects.
// The backends run it: internal/simrun in the simulation, internal/realrun
// on real servers; this package links neither, and its topology is
// package setup's vocabulary, which both share. The package is named for
// what it handles, one scenario at a time (scenario.Load), and stands
// apart from the folder of files so that scenarios/ holds data only.
//
// Load, LoadDir and LoadFS validate a file completely: every name a fault
// or the algorithm refers to exists, every duration and probability is in
// range. Errors name the file, the line and the field, e.g.
//
//	scenarios/f0.yaml:12: faults[0].group: unknown group "m2" (the masters are m1)
//
// and a file with several gets them together (Errors, up to MaxErrors),
// so that it is fixed in one pass.
package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/locksim/locksim/checker"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/setup"
)

// Scenario is one loaded scenario file.
type Scenario struct {
	// File is the path it was loaded from.
	File string
	// Name defaults to the file's base name without its extension.
	Name        string
	Description string
	// Seed is the default seed (default 1).
	Seed uint64
	// Duration is how long the world runs (virtual time); DurationLine is
	// its line, for the limits' errors (growth.go).
	Duration     time.Duration
	DurationLine int
	// Nodes are the masters with their replicas, in file order.
	Nodes []Node
	// Engine is topology.engine: what fails a group over on real servers
	// (EngineManual, the default, or EngineSentinel; see Engines).
	// EngineLine is its line (0 when the file leaves it out). The
	// simulation runs every engine alike: a failover is a failover there.
	Engine     string
	EngineLine int
	// Clients are the clients, expanded (a count of 3 named c gives c1, c2, c3).
	Clients []Client
	// Algorithm is the lock workload every client runs.
	Algorithm Algorithm
	// Faults are the scripted faults, in file order.
	Faults []Fault
	// Rates, when HasRates, draws random faults from the seed; RatesLine
	// is the line of the rates mapping.
	Rates     faults.Rates
	HasRates  bool
	RatesLine int
	// Scale is the factor every duration was multiplied by (1 unless
	// loaded with LoadScaled or ParseScaled).
	Scale float64
	// Expect is the verdict the run must give.
	Expect Expect
	// Source is the file's text as parsed: a real run's client worker
	// processes (internal/realrun) parse it again, with Scale.
	Source []byte `json:"-"`
	// Real is how the file replays on real servers (simulate agree).
	Real Real
	// Budget is what the run's checks may spend (the budget section);
	// its zero fields take checker.DefaultBudget's, in proportion to the
	// history.
	Budget checker.Budget
}

// Real is a scenario's settings and explanation for replays on real
// servers (`simulate agree`): real time, not the seed, decides what a
// fault hits there, so some files need their durations scaled less, and
// where the real verdict differs from the simulated one the file says why,
// beside the scenario it concerns.
type Real struct {
	// Scale multiplies the file's durations for the real replay (0: the
	// command's -scale). It is not itself scaled.
	Scale float64
	// Note explains a difference between the real and simulated verdicts,
	// or what the real replay needs; shown in the agreement table.
	Note string
}

// Node is a master (a group of its name) and its replicas.
type Node struct {
	Config   setup.NodeConfig
	Replicas []Replica
	Line     int
}

// Replica follows its master with a replication lag.
type Replica struct {
	Config setup.NodeConfig
	Repl   setup.ReplicaConfig
	Line   int
}

// Client is one simulated client.
type Client struct {
	Config setup.ClientConfig
	// Settings are the entry's own workload settings (start, holds, hold,
	// ...), overriding the algorithm section's for this client.
	Settings ClientSettings
	Line     int
}

// Fault is one scripted fault and the line it came from.
type Fault struct {
	Fault faults.Fault
	Line  int
}

// Load reads and validates one scenario file.
func Load(path string) (*Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// LoadDir loads every *.yaml file of dir, sorted by file name. It stops at
// the first bad file.
func LoadDir(dir string) ([]*Scenario, error) { return LoadFS(os.DirFS(dir), dir, "*.yaml", 1) }

// LoadFS loads the files of fsys that match pattern (fs.Glob's: "*.yaml"
// for all), sorted by name, with every duration multiplied by scale (1:
// as written; see LoadScaled). Each is named filepath.Join(dir, name) in
// its Scenario.File and its errors, dir saying where fsys's files are: for
// the committed files (package scenarios's FS), "scenarios", their path
// from the repository's root. It stops at the first bad file; no match is
// no scenario, not an error.
func LoadFS(fsys fs.FS, dir, pattern string, scale float64) ([]*Scenario, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	out := make([]*Scenario, 0, len(names))
	for _, name := range names { // fs.Glob sorts
		data, err := readFS(fsys, name, filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		s, err := parseScaled(filepath.Join(dir, name), data, scale, fsOpener(fsys, dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseFS is ParseScaled for the file name of fsys (named dir/name, as
// LoadFS names it), given its text: the files it names (a script kind's
// Lua) are read from fsys beside it, as LoadFS reads them. A built-in
// scenario's text parsed again (a shard's merge, a replay on real servers)
// finds its Lua in the command's own files, not on the disk.
func ParseFS(fsys fs.FS, dir, name string, data []byte, scale float64) (*Scenario, error) {
	return parseScaled(filepath.Join(dir, name), data, scale, fsOpener(fsys, dir, name))
}

// LoadScaled reads and validates one scenario file with every duration in
// it multiplied by scale (> 0): the run's duration, the fault times and
// durations, the algorithm's leases, holds and think times, the clients'
// timeouts, distributions, and the defaults the loader fills in for fields
// the file leaves out. Durations the lock library defaults itself (the
// watchdog's 30 s, the latch's 30 s, the WAIT's 1 s) are not scaled unless
// the file sets them. Validation (a TTL of at least 1ms, ...) applies to
// the scaled values; an error then says the durations were scaled. It is
// for replaying a scenario in real time (internal/realrun).
func LoadScaled(path string, scale float64) (*Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScaled(path, data, scale)
}

// ParseScaled is Parse with every duration multiplied by scale (see
// LoadScaled).
func ParseScaled(file string, data []byte, scale float64) (*Scenario, error) {
	return parseScaled(file, data, scale, osOpener(file))
}

// parseScaled is ParseScaled with the files the scenario names (a script
// kind's Lua) read through open.
func parseScaled(file string, data []byte, scale float64, open opener) (*Scenario, error) {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return nil, &Error{File: file, Msg: fmt.Sprintf("scale %v: want a positive number", scale)}
	}
	return parse(file, data, scale, open)
}

// Parse reads a scenario from data; file names it in errors, and the files
// the scenario names (a script kind's Lua) are read from the disk, relative
// to file's directory.
func Parse(file string, data []byte) (s *Scenario, err error) {
	return parse(file, data, 1, osOpener(file))
}

func parse(file string, data []byte, scale float64, open opener) (s *Scenario, err error) {
	d := &decoder{file: file, scale: scale, open: open}
	defer func() {
		// The loader must never panic on bad input; a panic here is a bug,
		// reported as an internal error about the file (wrapping
		// ErrInternal), never as bad input.
		if r := recover(); r != nil {
			s, err = nil, &Error{File: file, Internal: true,
				Msg: fmt.Sprintf("internal error reading the file (a bug in locksim, not in the file): %v", r)}
		}
	}()
	if len(data) > MaxFileSize {
		return nil, tooLarge(file, int64(len(data)))
	}
	if parseHook != nil {
		parseHook(data)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, d.syntaxError(err, data)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, &Error{File: file, Line: 1, Msg: "empty scenario file"}
	}
	// A second document ("---" and more) would be silently ignored: a file
	// holds one scenario.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, d.syntaxError(err, data)
	default:
		return nil, &Error{File: file, Line: max(next.Line-1, 1), Field: "yaml",
			Msg: "a second YAML document (after ---): a scenario file holds one scenario"}
	}
	s = &Scenario{File: file, Scale: scale, Source: data}
	d.scenario(s, root.Content[0])
	if err := d.result(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseHook, when a test sets it, is called with the data in parse, where
// a panic is recovered: the tests make the loader panic through it.
var parseHook func(data []byte)

// validName is what a scenario's name may be.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]*$`)

// MaxNameLen is the longest name a scenario may have, in bytes: its run's
// longest file under simulate run -out (NAME.redis.porcupine.html, written
// through a temporary ".NAME.redis.porcupine.html.NNNNNNNNNN" beside it)
// must fit the 255 bytes a file name may have, with room to spare. A
// longer name failed only after the run, at its first file.
const MaxNameLen = 200

// scenario reads the file's root mapping n into s, a part at a time
// (decoder.part), so that the errors of independent parts are reported
// together; a part that reads what another built is read only when that
// one had no error, an unknown field included: the algorithm reads the
// nodes (its group), the faults read the nodes, the clients and the
// algorithm (a trigger's op), the timeline reads the faults, the rates
// and the duration, the clients' workload fields read the algorithm, and
// the expectation reads the clients.
func (d *decoder) scenario(s *Scenario, n *yaml.Node) {
	// The root's unknown fields are reported, and fail no section: each
	// section is read from its own key, which a misspelled one leaves
	// missing (an error of its own when required).
	var top *obj
	read := false
	d.part(func() {
		top = d.mapping("", n, "name", "description", "seed", "duration", "topology", "clients", "algorithm", "faults", "rates", "expect", "real", "budget")
		read = d.err == nil
	})
	if !read {
		return
	}
	d.header(s, top)
	durationOK := d.part(func() {
		if top.required("duration") {
			s.Duration = top.dur("duration", 0)
			s.DurationLine = top.at("duration").Line
			if d.err == nil && s.Duration <= 0 {
				d.failf(top.at("duration"), "duration", "must be positive")
			}
		}
	})
	topologyOK := d.part(func() { top.required("topology") }) && d.topology(s, top)
	clientsOK := d.part(func() { top.required("clients") }) && d.clients(s, top, d.peekWorkload(top))
	algorithmOK := d.part(func() { top.required("algorithm") }) && topologyOK && d.part(func() {
		an, f := top.get("algorithm")
		d.algorithm(s, an, f)
	})
	if algorithmOK && clientsOK {
		d.part(func() { d.clientSettings(s) })
	}
	d.faults(s, top, topologyOK && clientsOK && algorithmOK, topologyOK, durationOK)
	if d.part(func() { top.required("expect") }) && clientsOK {
		d.part(func() {
			en, f := top.get("expect")
			d.expect(s, en, f)
		})
	}
	d.realAndBudget(s, top)
}

// header reads top's name, description and seed into s, a part each.
func (d *decoder) header(s *Scenario, top *obj) {
	d.part(func() {
		base := filepath.Base(s.File)
		s.Name = top.str("name", strings.TrimSuffix(base, filepath.Ext(base)))
		// The name becomes file names (simulate run -out): no separators,
		// no "..", nothing empty.
		const rule = "want ASCII letters, digits and . _ - @ +, starting with a letter or digit"
		switch valid := validName.MatchString(s.Name); {
		case d.err != nil:
		case !valid && !top.has("name"):
			// No name: field: the file's name is the scenario's, and the
			// file is what to rename (or give a name: field).
			d.failf(top.at("name"), "name", "none given, and the file's name %q is no scenario name: %s; add a name: field, or rename the file", s.Name, rule)
		case !valid:
			d.failf(top.at("name"), "name", "%q: %s", s.Name, rule)
		case len(s.Name) > MaxNameLen:
			d.failf(top.at("name"), "name", "%d bytes long: at most %d (the files simulate run -out writes are named after it, and a file name has at most 255 bytes)", len(s.Name), MaxNameLen)
		}
	})
	d.part(func() { s.Description = top.str("description", "") })
	d.part(func() { s.Seed = top.uint("seed", 1) })
}

// faults reads top's faults, a part each, when read (the nodes, clients
// and algorithm they name read without an error), and its rates; then,
// when they and the duration (durationOK) read without an error, checks
// the timeline of the faults.
func (d *decoder) faults(s *Scenario, top *obj, read, topologyOK, durationOK bool) {
	ok := read
	if read {
		var items []*yaml.Node
		var f string
		ok = d.part(func() { items, f = top.list("faults") })
		for i, it := range items {
			ok = d.part(func() { d.fault(s, it, index(f, i)) }) && ok
		}
	}
	ratesOK := d.part(func() {
		if top.has("rates") {
			rn, f := top.get("rates")
			d.rates(s, rn, f, topologyOK)
		}
	})
	if ok && ratesOK && durationOK {
		d.part(func() { d.checkTimeline(s, d.faultObjs) })
	}
}

// realAndBudget reads top's real and budget sections, a part each.
func (d *decoder) realAndBudget(s *Scenario, top *obj) {
	if top.has("real") {
		d.part(func() {
			rn, f := top.get("real")
			r := d.mapping(f, rn, "scale", "note")
			s.Real = Real{Scale: r.float("scale", 0, 0.01, 100), Note: r.str("note", "")}
		})
	}
	if top.has("budget") {
		d.part(func() {
			bn, f := top.get("budget")
			d.budget(s, bn, f)
		})
	}
}

var persistences = []string{"none", "everysec", "always"}

func (d *decoder) nodeConfig(o *obj, name string) setup.NodeConfig {
	p, _ := setup.ParsePersistence(o.oneOf("persistence", "none", persistences...))
	cfg := setup.NodeConfig{Name: name, Persistence: p, DriftPPM: o.int("drift_ppm", 0, -setup.MaxDriftPPM, setup.MaxDriftPPM)}
	switch o.oneOf("lua", "fast", "fast", "interpreted", "miniredis") {
	case "interpreted":
		cfg.Lua = setup.LuaInterpreted
	case "miniredis":
		cfg.Lua = setup.LuaMiniredis
	}
	return cfg
}

// names holds every node and client name, to reject duplicates and
// resolve references.
func (s *Scenario) isNode(name string) bool {
	for _, n := range s.Nodes {
		if n.Config.Name == name {
			return true
		}
		for _, r := range n.Replicas {
			if r.Config.Name == name {
				return true
			}
		}
	}
	return false
}

func (s *Scenario) isClient(name string) bool {
	for _, c := range s.Clients {
		if c.Config.Name == name {
			return true
		}
	}
	return false
}

func (s *Scenario) group(name string) (Node, bool) {
	for _, n := range s.Nodes {
		if n.Config.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

func (s *Scenario) masters() []string {
	out := make([]string, len(s.Nodes))
	for i, n := range s.Nodes {
		out[i] = n.Config.Name
	}
	return out
}

// newName checks that name, for a node or client at field f, is not empty
// and not taken, and records it. The names are a map, not a scan of the
// nodes and clients, so that reading N clients takes time linear in N
// (the scan took 7.4 s for 40,000 clients).
//
// A name holding a control or formatting character (an escape sequence,
// a carriage return, a bidirectional override) is refused: names are
// printed on terminals, in verdict lines and timelines, where such a
// character would rewrite or hide what is shown.
func (d *decoder) newName(n *yaml.Node, f, name, what string) bool {
	if d.names == nil {
		d.names = map[string]string{}
	}
	switch used, ok := d.names[name]; {
	case name == "":
		d.failf(n, f, "empty name")
	case strings.IndexFunc(name, unprintable) >= 0:
		i := strings.IndexFunc(name, unprintable)
		r, _ := utf8.DecodeRuneInString(name[i:])
		d.failf(n, f, "name %q holds the control or formatting character U+%04X: names are printed on terminals", name, r)
	case ok:
		d.failf(n, f, "name %q already used by a %s", name, used)
	default:
		d.names[name] = what
		return true
	}
	return false
}

// unprintable reports whether r is a control or formatting character
// (Unicode categories Cc and Cf), which a name may not hold (newName).
func unprintable(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// The failover engines of topology.engine: who promotes a replica when a
// group fails over on real servers (internal/realrun). The simulation
// treats them alike.
const (
	// EngineManual: the harness kills the master and promotes a replica
	// itself (REPLICAOF NO ONE).
	EngineManual = "manual"
	// EngineSentinel: three redis-sentinel processes watch every group;
	// the harness kills the master and the sentinels elect and promote.
	EngineSentinel = "sentinel"
)

// Engines are topology.engine's values, the default first. A new engine
// is one more name here (and its meaning in internal/realrun).
var Engines = []string{EngineManual, EngineSentinel}

// topology reads the topology section of top (present): its engine, and
// each node with its replicas, a part each (decoder.part). It returns
// whether every part read without an error.
func (d *decoder) topology(s *Scenario, top *obj) bool {
	var t *obj
	if !d.part(func() {
		tn, f := top.get("topology")
		t = d.mapping(f, tn, "nodes", "engine")
	}) {
		return false
	}
	ok := d.part(func() {
		s.Engine = t.oneOf("engine", Engines[0], Engines...)
		if t.has("engine") {
			s.EngineLine = t.at("engine").Line
		}
	})
	var items []*yaml.Node
	var f string
	if !d.part(func() {
		if !t.required("nodes") {
			return
		}
		items, f = t.list("nodes")
		if d.err == nil && len(items) == 0 {
			d.failf(t.at("nodes"), f, "at least one node is needed")
		}
	}) {
		return false
	}
	for i, it := range items {
		ok = d.part(func() { d.node(s, index(f, i), it) }) && ok
	}
	return ok
}

// nodeCount is the number of nodes read so far, masters and replicas.
func (s *Scenario) nodeCount() int {
	n := len(s.Nodes)
	for _, nd := range s.Nodes {
		n += len(nd.Replicas)
	}
	return n
}

// node reads node it (at path f) and its replicas into s.
func (d *decoder) node(s *Scenario, f string, it *yaml.Node) {
	o, name, ok := d.namedNode(s, f, it, "replicas")
	if !ok {
		return
	}
	// Appended before its replicas are read, so that newName sees it.
	s.Nodes = append(s.Nodes, Node{Config: d.nodeConfig(o, name), Line: resolve(it).Line})
	node := &s.Nodes[len(s.Nodes)-1]
	reps, rf := o.list("replicas")
	for j, rt := range reps {
		ro, rname, ok := d.namedNode(s, index(rf, j), rt, "lag")
		if !ok {
			return
		}
		node.Replicas = append(node.Replicas, Replica{Config: d.nodeConfig(ro, rname),
			Repl: setup.ReplicaConfig{Lag: ro.dist("lag", setup.Dist{})}, Line: resolve(rt).Line})
	}
}

// namedNode reads a node or replica mapping at path: its fields are the
// node fields and extra, and its name is required and new.
func (d *decoder) namedNode(s *Scenario, path string, n *yaml.Node, extra string) (*obj, string, bool) {
	o := d.mapping(path, n, "name", "persistence", "drift_ppm", "lua", extra)
	if !o.required("name") {
		return nil, "", false
	}
	if nodes := s.nodeCount(); d.err == nil && nodes == MaxNodes {
		d.failf(o.at("name"), join(path, "name"), "node %d: more than the %d masters and replicas a scenario may have", nodes+1, MaxNodes)
		return nil, "", false
	}
	name := o.str("name", "")
	return o, name, d.newName(o.at("name"), join(path, "name"), name, "node")
}

var retries = []string{"none", "go-redis", "redisson", "redisson-3.36"}

// clientEntryFields are a client entry's own fields, beyond the workload
// fields its algorithm's kind lets it set (clientFields).
var clientEntryFields = []string{"name", "count", "latency", "timeout", "retry", "drift_ppm"}

// clients reads the clients list of top (present), each entry a part
// (decoder.part); w is the algorithm's kind, read ahead (peekWorkload),
// whose per-client fields an entry may also have (nil when the kind is
// unknown: any kind's). It returns whether every part read without an
// error.
func (d *decoder) clients(s *Scenario, top *obj, w Workload) bool {
	var items []*yaml.Node
	var f string
	if !d.part(func() {
		items, f = top.list("clients")
		if d.err == nil && len(items) == 0 {
			d.failf(top.at("clients"), f, "at least one client is needed")
		}
	}) {
		return false
	}
	allowed := slices.Clone(clientEntryFields)
	var unknown string
	if w == nil {
		allowed = append(allowed, clientWorkloadFields...)
		unknown = "unknown field (want one of " + strings.Join(allowed, ", ") + ")"
	} else {
		own := clientFields(w.settings())
		allowed = append(allowed, own...)
		unknown = fmt.Sprintf("not a field of a client under algorithm %s (a client's fields: %s; its per-client fields of the algorithm: %s)",
			w.Kind(), strings.Join(clientEntryFields, ", "), strings.Join(own, ", "))
	}
	ok := true
	for i, it := range items {
		ok = d.part(func() { d.client(s, index(f, i), it, allowed, unknown) }) && ok
	}
	return ok
}

// client reads client entry it (at path cf), with the fields allowed
// (unknown: the message of another), into s: one client, or count.
func (d *decoder) client(s *Scenario, cf string, it *yaml.Node, allowed []string, unknown string) {
	o := d.mappingMsg(cf, it, allowed, unknown)
	first := len(s.Clients)
	cfg := setup.ClientConfig{
		Latency:  o.dist("latency", setup.Dist{}),
		Timeout:  o.dur("timeout", 0),
		DriftPPM: o.int("drift_ppm", 0, -setup.MaxDriftPPM, setup.MaxDriftPPM),
	}
	if o.has("timeout") && d.err == nil && cfg.Timeout == 0 {
		d.failf(o.at("timeout"), join(cf, "timeout"), "must be positive")
	}
	switch o.oneOf("retry", "none", retries...) {
	case "go-redis":
		cfg.Retry = setup.GoRedisRetry
	case "redisson":
		cfg.Retry = setup.RedissonRetry
	case "redisson-3.36":
		cfg.Retry = setup.Redisson336Retry
	}
	if !o.has("count") {
		if o.near["count"] {
			d.quiet = true // a misspelled count, reported: name is not missing
			return
		}
		if !o.required("name") {
			return
		}
		cfg.Name = o.str("name", "")
		if !d.newName(o.at("name"), join(cf, "name"), cfg.Name, "client") {
			return
		}
		if len(s.Clients) == MaxClients {
			d.failf(o.at("name"), join(cf, "name"), "client %d: more than the %d a scenario may have", MaxClients+1, MaxClients)
			return
		}
		s.Clients = append(s.Clients, Client{Config: cfg, Line: resolve(it).Line})
		d.stashClientSettings(o, cf, first, len(s.Clients))
		return
	}
	count := o.int("count", 1, 1, MaxClients)
	if d.err == nil && len(s.Clients)+int(count) > MaxClients {
		d.failf(o.at("count"), join(cf, "count"), "%d clients in all with this entry's %d: more than the %d a scenario may have", len(s.Clients)+int(count), count, MaxClients)
	}
	prefix := o.str("name", "c")
	for k := int64(1); k <= count && d.err == nil; k++ {
		c := cfg
		c.Name = fmt.Sprintf("%s%d", prefix, k)
		if d.newName(o.at("name"), join(cf, "name"), c.Name, "client") {
			s.Clients = append(s.Clients, Client{Config: c, Line: resolve(it).Line})
		}
	}
	d.stashClientSettings(o, cf, first, len(s.Clients))
}

func (d *decoder) rates(s *Scenario, n *yaml.Node, f string, topologyOK bool) {
	o := d.mapping(f, n, "failover", "failover_down", "crash", "crash_down", "pause", "pause_for", "clock_jump", "jump_by",
		"partition", "partition_for", "drift_ppm", "drop_request", "drop_reply", "drop_push", "duplicate", "delay_p", "delay")
	rate := func(k string) float64 { return o.float(k, 0, 0, faults.MaxRate) }
	s.Rates = faults.Rates{
		Failover: rate("failover"), FailoverDown: o.dist("failover_down", setup.Dist{}), Crash: rate("crash"), CrashDown: o.dist("crash_down", setup.Dist{}),
		Pause: rate("pause"), PauseFor: o.dist("pause_for", setup.Dist{}),
		ClockJump: rate("clock_jump"), JumpBy: o.dist("jump_by", setup.Dist{}),
		Partition: rate("partition"), PartitionFor: o.dist("partition_for", setup.Dist{}),
		DriftPPM:    o.int("drift_ppm", 0, 0, setup.MaxDriftPPM),
		DropRequest: o.prob("drop_request", 0), DropReply: o.prob("drop_reply", 0), DropPush: o.prob("drop_push", 0),
		Duplicate: o.prob("duplicate", 0), DelayP: o.prob("delay_p", 0), Delay: o.dist("delay", setup.Dist{}),
	}
	if topologyOK && d.err == nil && s.Rates.Failover > 0 && !slices.ContainsFunc(s.Nodes, func(n Node) bool { return len(n.Replicas) > 0 }) {
		// Drawn per replicated group: with none, the rate would draw
		// nothing, and a verdict of ok would read as a lock that survives
		// failovers (a scripted failover of such a group is refused too).
		d.failf(o.at("failover"), join(f, "failover"), "no group has a replica, so a failover rate draws no failover: give a node replicas (topology.nodes[].replicas) or drop the rate")
	}
	s.HasRates = true
	if rn := resolve(n); rn != nil {
		s.RatesLine = rn.Line
	}
}

// ErrAt is err as an *Error at line and field of the file, or err itself
// when it is an *Error already (it names its own place): what a backend
// returns when a node, replica, client or workload the file describes
// cannot start, so that the refusal points at the line that asks for it.
func (s *Scenario) ErrAt(line int, field string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{File: s.File, Line: line, Field: field, Msg: err.Error(), Err: err}
}
