package realrun

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/scenario"
)

// TestFailoverRejoinOnRealServers: a failover with down (faults.Failover.Down)
// restarts the killed master that much later and makes it replicate the
// promoted one, as the simulation's World.FailoverSteps does: a second
// failover then promotes it back, nothing skipped. The control, a failover
// without down, leaves m1 dead: the loader refuses the second failover,
// which would have no replica to promote.
func TestFailoverRejoinOnRealServers(t *testing.T) {
	t.Parallel()
	bin := redistest.Binary(t)
	for _, rejoin := range []bool{true, false} {
		name := map[bool]string{true: "rejoin", false: "stays-down"}[rejoin]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			down := ""
			if rejoin {
				down = ", down: 1s"
			}
			s, err := scenario.Parse("rejoin.yaml", []byte(`duration: 3500ms
topology:
  nodes:
    - name: m1
      replicas: [{name: r1, lag: 10ms}]
clients: [{name: c1}]
algorithm: {kind: simple, ttl: 1s, hold: 100ms, think: 100ms}
faults:
  - {kind: failover, at: 500ms, group: m1`+down+`}
  - {kind: failover, at: 2500ms, group: m1}
expect: any
`))
			if !rejoin {
				if err == nil || !strings.Contains(err.Error(), "no running replica left to promote") {
					t.Fatalf("without down: %v; want the second failover refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(s, Options{Bin: bin, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			var promoted, restarts, skipped []string
			for _, rec := range r.Records {
				switch {
				case rec.Kind == history.KindFault && rec.Op == history.FaultFailover:
					promoted = append(promoted, rec.Value)
				case rec.Kind == history.KindFault && rec.Op == history.FaultRestart:
					restarts = append(restarts, rec.Node)
				case rec.Kind == history.KindFault && rec.Op == history.FaultSkipped:
					skipped = append(skipped, rec.Detail)
				}
			}
			got := strings.Join(promoted, ",") + " | " + strings.Join(restarts, ",") + " | " + strings.Join(skipped, ";")
			if want := "r1,m1 | m1 | "; got != want {
				var b strings.Builder
				for _, rec := range r.Records {
					b.WriteString(recordLine(rec))
				}
				t.Fatalf("promoted | restarted | skipped: %q, want %q\n%s", got, want, b.String())
			}
		})
	}
}

// TestPartitionCutsALinkMadeAfterIt: a partition in force cuts a
// replication link made after it began, as in the simulation: m1, failed
// over to r1 at 300ms, rejoins as r1's replica at 800ms while a partition
// keeps it apart from r1 (from 600ms), so it never gets c1's lock (taken
// on r1 at 1s), and the failover back to m1 at 2.5s loses it: a silent
// loss, the simulation's verdict. The new link was left uncut: m1 got the
// key and the run was ok.
func TestPartitionCutsALinkMadeAfterIt(t *testing.T) {
	t.Parallel()
	s, err := scenario.Parse("partitioned-rejoin.yaml", []byte(`duration: 4s
topology:
  nodes:
    - name: m1
      replicas: [{name: r1, lag: 10ms}]
clients: [{name: c1, start: 1s, holds: 1, hold: 3s}]
algorithm: {kind: simple, ttl: 3500ms, hold: 3s, think: 100ms}
faults:
  - {at: 300ms, kind: failover, group: m1, down: 500ms}
  - {kind: partition, from: 600ms, a: [m1], b: [r1]}
  - {at: 2500ms, kind: failover, group: m1}
expect: {violated: [silent-loss]}
`))
	if err != nil {
		t.Fatal(err)
	}
	replayUntil(t, s, 1)
}
