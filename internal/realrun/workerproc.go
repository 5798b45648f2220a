package realrun

// The worker's side of a client worker process (worker.go says why and how
// it talks to the coordinator). The worker is a run of its own with one
// client and no servers: its client is the in-process client (client.go),
// its proxies' addresses and its groups' masters are the coordinator's
// (current messages follow failovers), its ops go to the coordinator
// (workerSink), and its fenced writes too (traffic.NewRemoteResource).

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
	"github.com/locksim/locksim/setup"
	"github.com/locksim/locksim/traffic"
)

// MaybeWorker runs this process as a client worker and exits, when it was
// started as one (by a real run that pauses clients, worker.go); otherwise
// it returns at once. Call it first in main, and in TestMain of a package
// whose tests run such scenarios (the worker is the running executable
// started again).
func MaybeWorker() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	if err := workerMain(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "locksim worker: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// workerSink sends a worker's ops and writes to the coordinator.
type workerSink struct {
	r     *run
	c     *client // the worker's one client
	mono0 time.Duration

	// lastEndStep is the client's step at its last op's end (ok: there was
	// one), under the client's baton: an expiry begun in that step is
	// stamped at that end by the coordinator (client.BeginOp).
	lastEndStep int
	lastEndOK   bool

	encMu sync.Mutex
	enc   *json.Encoder

	ids atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan wmsg // calls waiting for the coordinator's answer
}

// call sends m (with a fresh ID) and waits for the coordinator's answer
// to it; false once the run is over.
func (k *workerSink) call(m wmsg) (wmsg, bool) {
	m.ID = k.ids.Add(1)
	ch := make(chan wmsg, 1)
	k.mu.Lock()
	k.pending[m.ID] = ch
	k.mu.Unlock()
	k.send(m)
	select {
	case a := <-ch:
		return a, true
	case <-k.r.life.ctx.Done():
		return wmsg{}, false
	}
}

// answer delivers the coordinator's answer a to the call waiting for it.
func (k *workerSink) answer(a wmsg) {
	k.mu.Lock()
	ch := k.pending[a.ID]
	delete(k.pending, a.ID)
	k.mu.Unlock()
	if ch != nil {
		ch <- a
	}
}

func (k *workerSink) send(m wmsg) {
	k.encMu.Lock()
	defer k.encMu.Unlock()
	_ = k.enc.Encode(m)
}

// begin sends an op's call, stamped with the shared monotonic clock, and
// waits until the coordinator has recorded it and armed the faults bound
// to it (onop.go), before the op sends anything.
func (k *workerSink) begin(client, lockName, op string, args ...string) history.Op {
	if k.r.life.isStopped() {
		return stoppedOp{}
	}
	same := op == history.OpExpire && k.lastEndOK && k.lastEndStep == k.c.steps
	a, _ := k.call(wmsg{K: "begin", T: int64(monoNow() - k.mono0), Lock: lockName, Op: op, Args: args, Same: same})
	return &workerOp{k: k, id: a.ID}
}

// beginReq sends a command's call (reqs.go) and waits until the
// coordinator has recorded it and armed the client's proxies to note its
// runs, before the command is sent.
func (k *workerSink) beginReq(group, op string, args []string) *reqRec {
	a, ok := k.call(wmsg{K: "req", Group: group, Op: op, Args: args})
	if !ok {
		return nil
	}
	return &reqRec{remote: k, id: a.ID}
}

// endReq sends a command's return.
func (k *workerSink) endReq(id int64, outcome history.Outcome, result, detail string) {
	if !k.r.life.isStopped() {
		k.send(wmsg{K: "reqend", ID: id, Outcome: outcome, Result: result, Detail: detail})
	}
}

// write sends a fenced write and waits for the coordinator's answer (false
// once the run is over).
func (k *workerSink) write(token int64) bool {
	a, ok := k.call(wmsg{K: "write", Token: token})
	return ok && a.OK
}

// workerOp is an op of a worker: its detail and return go to the
// coordinator, which stamps the return.
type workerOp struct {
	k  *workerSink
	id int64
}

func (o *workerOp) SetDetail(detail string) {
	if !o.k.r.life.isStopped() {
		o.k.send(wmsg{K: "detail", ID: o.id, Detail: detail})
	}
}

func (o *workerOp) End(outcome history.Outcome, result string) {
	if !o.k.r.life.isStopped() {
		o.k.lastEndStep, o.k.lastEndOK = o.k.c.steps, true
		o.k.send(wmsg{K: "end", ID: o.id, Outcome: outcome, Result: result})
	}
}

// workerMain is a worker's life: init, ready, go, then the coordinator's
// messages until stop or the end of in.
func workerMain(in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	enc := json.NewEncoder(out)
	var init wmsg
	if err := dec.Decode(&init); err != nil || init.K != "init" {
		return fmt.Errorf("no init from the coordinator (%v)", err)
	}
	r, cfg, err := workerRun(init)
	if err != nil {
		_ = enc.Encode(wmsg{K: "fail", Err: err.Error()})
		return err
	}
	sink := &workerSink{r: r, enc: enc, pending: map[int64]chan wmsg{}}
	r.sink = sink
	sink.send(wmsg{K: "ready"})
	var start wmsg
	if err := dec.Decode(&start); err != nil || start.K != "go" {
		return nil // stopped before the start (or the coordinator is gone)
	}
	sink.mono0 = time.Duration(start.Mono0)
	var res *traffic.Resource
	if shared := r.s.NewResource(); shared != nil {
		res = traffic.NewRemoteResource(shared.Name(), sink.write)
	}
	c := r.newClient(cfg)
	sink.c = c
	r.clients = append(r.clients, c)
	if err := r.s.StartWorkload(c, res); err != nil {
		sink.send(wmsg{K: "fail", Err: err.Error()})
		return err
	}
loop:
	for {
		var m wmsg
		if err := dec.Decode(&m); err != nil {
			break // the coordinator closed the pipe (or is gone)
		}
		switch m.K {
		case "current":
			r.srv.setMaster(m.Group, m.Node)
		case "ack":
			sink.answer(m)
		case "stop":
			break loop
		}
	}
	// Nothing more is sent: the coordinator has stopped its history. The
	// tasks still running end with the process.
	r.life.markStopped()
	sink.encMu.Lock() // no half-written line is left behind
	return nil
}

// workerRun is the worker's run: the scenario parsed again from the
// coordinator's text, with its scale and seed, and the client's proxies.
func workerRun(init wmsg) (*run, setup.ClientConfig, error) {
	s, err := scenario.ParseScaled(init.File, init.Data, init.Scale)
	if err != nil {
		return nil, setup.ClientConfig{}, err
	}
	s.Seed = init.Seed
	var cfg setup.ClientConfig
	found := false
	for _, sc := range s.Clients {
		if sc.Config.Name == init.Client {
			cfg, found = sc.Config, true
		}
	}
	if !found {
		return nil, cfg, errors.New("no client " + init.Client + " in " + init.File)
	}
	r := newRun(s, Options{})
	m := map[string]*redistest.Proxy{}
	for node, addr := range init.Proxies {
		m[node] = &redistest.Proxy{Addr: addr}
	}
	r.srv.cproxies[init.Client] = m
	for g, n := range init.Current {
		r.srv.current[g] = n
	}
	return r, cfg, nil
}
