package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replyErr is the error text of a command's reply on s ("" when it
// succeeded).
func replyErr(t *testing.T, s *Server, args ...string) string {
	t.Helper()
	_, err := s.Do(args...)
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRedisCluster forms a cluster of 3 masters and 3 replicas, moves a
// slot (the source answers ASK for a moved key while the slot migrates and
// MOVED after it), fails a master over with CLUSTER FAILOVER FORCE and
// another by killing it, and stops: no process started from the test's
// directory is left.
func TestRedisCluster(t *testing.T) {
	dir := t.TempDir()
	c := StartRedisCluster(t, RedisClusterConfig{Dir: dir})
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(c.Nodes))
	}
	masters, err := c.Masters()
	if err != nil || len(masters) != 3 {
		t.Fatalf("masters %v, %v; want 3", masters, err)
	}
	for _, m := range masters {
		rs, err := c.ReplicasOf(m)
		if err != nil || len(rs) != 1 || slices.Contains(masters, rs[0]) {
			t.Fatalf("replicas of %s: %v, %v; want one replica", m.Addr, rs, err)
		}
		if err := rs[0].WaitLinkUp(10 * time.Second); err != nil {
			t.Fatal(err)
		}
	}

	// A key lives on the master of its slot, which sends others there.
	slot, err := c.KeySlot("alpha")
	if err != nil {
		t.Fatal(err)
	}
	from, err := c.MasterOf(slot)
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, from, "OK", "SET", "alpha", "1")
	var to *Server
	for _, m := range masters {
		if m != from {
			to = m
			if e := replyErr(t, m, "GET", "alpha"); !strings.HasPrefix(e, "MOVED "+strconv.Itoa(slot)+" "+from.Addr) {
				t.Fatalf("GET alpha on %s: %q, want MOVED to %s", m.Addr, e, from.Addr)
			}
		}
	}

	// Resharding the slot: ASK during, MOVED after.
	mig, err := c.BeginMigration(slot, to)
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, from, "1", "GET", "alpha") // not yet moved: served by the source
	if err := mig.MoveKeys("alpha"); err != nil {
		t.Fatal(err)
	}
	if e := replyErr(t, from, "GET", "alpha"); !strings.HasPrefix(e, "ASK "+strconv.Itoa(slot)+" "+to.Addr) {
		t.Fatalf("GET alpha on the source mid-migration: %q, want ASK to %s", e, to.Addr)
	}
	if e := replyErr(t, to, "GET", "alpha"); !strings.HasPrefix(e, "MOVED") {
		t.Fatalf("GET alpha on the target without ASKING: %q, want MOVED", e)
	}
	mustDoAll(t, to, []any{"OK", "1"}, []string{"ASKING"}, []string{"GET", "alpha"})
	if err := mig.Finish(); err != nil {
		t.Fatal(err)
	}
	if e := replyErr(t, from, "GET", "alpha"); !strings.HasPrefix(e, "MOVED "+strconv.Itoa(slot)+" "+to.Addr) {
		t.Fatalf("GET alpha on the old owner: %q, want MOVED to %s", e, to.Addr)
	}
	mustDo(t, to, "1", "GET", "alpha")
	if got, _ := c.MasterOf(slot); got != to {
		t.Fatalf("slot %d on %v after the move, want %s", slot, got, to.Addr)
	}

	// CLUSTER FAILOVER FORCE: the replica takes the slot; the old master,
	// alive, becomes its replica.
	rs, err := c.ReplicasOf(to)
	if err != nil {
		t.Fatal(err)
	}
	// A forced failover does not wait for the replica to catch up: wait
	// until it has the key the migration brought (a loaded machine can
	// take a while to replicate it), or it takes the slot without it.
	if err := waitFor(20*time.Second, func() (bool, string) {
		got, err := DoAll(rs[0].Addr, time.Second, []string{"READONLY"}, []string{"GET", "alpha"})
		if err != nil {
			return false, err.Error()
		}
		return got[1] == "1", fmt.Sprint(got[1])
	}, "replica %s has alpha", rs[0].Addr); err != nil {
		t.Fatal(err)
	}
	if err := c.FailoverForce(rs[0], slot, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	mustDo(t, rs[0], "1", "GET", "alpha")
	if err := to.WaitLinkUp(20 * time.Second); err != nil {
		t.Fatalf("the old master did not become the new one's replica: %v", err)
	}
	if err := c.WaitOK(20 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Killing a master: its replica takes its slots over.
	s2, err := c.KeySlot("beta")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := c.MasterOf(s2)
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, m2, "OK", "SET", "beta", "2")
	mustDoAll(t, m2, []any{"OK", "1"}, []string{"SET", "beta", "2"}, []string{"WAIT", "1", "2000"})
	promoted, err := c.KillMaster(m2, s2, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if promoted == m2 || promoted.State() != Running {
		t.Fatalf("promoted %s", promoted.Addr)
	}
	mustDo(t, promoted, "2", "GET", "beta")
	if err := c.WaitOK(20 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Stop leaves no process behind: neither a pid it started (killed
	// master included) nor any process whose command line names the test's
	// directory.
	var pids []int
	for _, s := range c.Nodes {
		if p := s.Pid(); p != 0 {
			pids = append(pids, p)
		}
	}
	if len(pids) != 5 {
		t.Fatalf("%d running nodes before Stop, want 5", len(pids))
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("pgrep", "-f", dir).Output()
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("processes left after Stop: %s", out)
	}
	for _, p := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(p)); err == nil {
			t.Fatalf("pid %d still exists after Stop", p)
		}
	}
	for _, s := range c.Nodes {
		if s.State() != Down {
			t.Fatalf("%s is %v after Stop", s.Addr, s.State())
		}
	}
}
