package redistest

import (
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSentinelFailover: three sentinels agree on the master at start (with
// the replicas and each other connected); when the master is killed
// (SIGKILL) or frozen (SIGSTOP), they elect a leader and promote a replica
// that has the master's data, announce it with +switch-master on every
// sentinel, and make the other replica follow it; afterwards all agree on
// the new master. Stopping leaves no process of the topology running. The
// freeze case runs with LOCKSIM_REAL set (make real), to keep make test's
// time down.
func TestSentinelFailover(t *testing.T) {
	for _, mode := range []string{"kill", "freeze"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "freeze" && os.Getenv("LOCKSIM_REAL") == "" {
				t.Skip("set LOCKSIM_REAL=1 (make real) to run it")
			}
			top := StartSentinelTopology(t, 2, SentinelConfig{FailoverTimeout: 10 * time.Second})
			mustDoAll(t, top.Master, []any{"OK", "2"}, []string{"SET", "k", "v"}, []string{"WAIT", "2", "2000"})

			var mu sync.Mutex
			switched := map[string]string{} // sentinel -> new master address
			for _, s := range top.Sentinels.Procs {
				es, err := s.Subscribe(func(e SentinelEvent) {
					f := strings.Fields(e.Payload)
					if len(f) == 5 && f[0] == top.Name {
						mu.Lock()
						switched[e.Sentinel] = net.JoinHostPort(f[3], f[4])
						mu.Unlock()
					}
				}, "+switch-master")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(es.Close)
			}
			start := time.Now()
			if mode == "kill" {
				must(t, top.Master.Kill())
			} else {
				must(t, top.Master.Pause())
			}
			var to string
			err := waitFor(30*time.Second, func() (bool, string) {
				mu.Lock()
				defer mu.Unlock()
				if len(switched) < len(top.Sentinels.Procs) {
					return false, "announced by " + strings.Join(keys(switched), ", ")
				}
				for _, a := range switched {
					if to != "" && a != to {
						return false, "sentinels announce different masters"
					}
					to = a
				}
				return true, ""
			}, "no +switch-master on every sentinel")
			must(t, err)
			t.Logf("%s: +switch-master to %s on every sentinel after %v", mode, to, time.Since(start).Round(time.Millisecond))
			i := slices.IndexFunc(top.Replicas, func(r *Server) bool { return r.Addr == to })
			if i < 0 {
				t.Fatalf("new master %s is no replica", to)
			}
			promoted, other := top.Replicas[i], top.Replicas[1-i]
			if info, err := promoted.Info("replication"); err != nil || info["role"] != "master" {
				t.Fatalf("promoted %s has role %q (%v)", to, info["role"], err)
			}
			mustDo(t, promoted, "v", "GET", "k")
			must(t, top.Sentinels.WaitAgree(top.Name, to, 1, 20*time.Second))
			must(t, waitFor(20*time.Second, func() (bool, string) {
				info, err := other.Info("replication")
				if err != nil {
					return false, err.Error()
				}
				return info["master_port"] == promoted.Addr[strings.LastIndexByte(promoted.Addr, ':')+1:] && info["master_link_status"] == "up",
					"following " + info["master_host"] + ":" + info["master_port"] + " link " + info["master_link_status"]
			}, "replica %s does not follow the new master", other.Addr))
			mustDoAll(t, promoted, []any{"OK", "1"}, []string{"SET", "k2", "v2"}, []string{"WAIT", "1", "2000"})
			mustDo(t, other, "v2", "GET", "k2")

			// Stop everything as the cleanup does, and check that no
			// process is left.
			var pids []int
			for _, s := range top.Sentinels.Procs {
				pids = append(pids, s.Pid())
			}
			for _, s := range append([]*Server{top.Master}, top.Replicas...) {
				if p := s.Pid(); p != 0 {
					pids = append(pids, p)
				}
			}
			must(t, top.Sentinels.Stop())
			for _, s := range append([]*Server{top.Master}, top.Replicas...) {
				must(t, s.Stop())
			}
			for _, p := range pids {
				if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("process %d still exists after Stop (kill 0: %v)", p, err)
				}
			}
		})
	}
}

// TestSentinelStartFails: a sentinel that cannot start (a bad binary
// option in its configuration) is an error naming its log, and the
// sentinels already started are stopped by the caller.
func TestSentinelStartFails(t *testing.T) {
	bin := SentinelBinary(t)
	ss, err := LaunchSentinels(SentinelConfig{Bin: bin, Dir: t.TempDir(), Masters: []Monitor{{Name: "bad name", Addr: "127.0.0.1:1"}}, StartTimeout: 2 * time.Second})
	if ss != nil {
		defer ss.Stop()
	}
	if err == nil || !strings.Contains(err.Error(), "did not come up") {
		t.Fatalf("error %v, want a sentinel that did not come up", err)
	}
	if _, err := LaunchSentinels(SentinelConfig{Bin: bin, Dir: t.TempDir()}); err == nil {
		t.Fatal("no master to watch: no error")
	}
	if _, err := LaunchSentinels(SentinelConfig{Bin: bin, Dir: t.TempDir(), Masters: []Monitor{{Name: "m", Addr: "127.0.0.1:1"}}, DownAfter: time.Second}); err == nil || !strings.Contains(err.Error(), "more than 1s") {
		t.Fatalf("DownAfter 1s: error %v", err)
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
