package locktest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/locktest"
)

// TestRedis: the same call on real redis-server processes (skipped
// without redis-server, unless LOCKSIM_REQUIRE_REDIS is set): a short run
// of the correct lock, with a history, safe, and a replay that says it
// ran on real servers.
func TestRedis(t *testing.T) {
	rs := locktest.Run(t, setnx, locktest.Setup{Lease: 2 * time.Second, Duration: 3 * time.Second}, locktest.Redis(1))
	if len(rs) != 1 || rs[0].Unsafe() || len(rs[0].Records()) == 0 || !strings.Contains(rs[0].Replay, "locktest.Redis(1)") {
		t.Fatalf("%d runs: %v", len(rs), rs)
	}
}

// TestRedisMissing: without redis-server on the PATH a real run skips the
// test, or fails it when LOCKSIM_REQUIRE_REDIS is set, saying why.
func TestRedisMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, require := range []string{"", "1"} {
		t.Setenv("LOCKSIM_REQUIRE_REDIS", require)
		rec := &recorder{TB: t}
		locktest.Run(rec, setnx, locktest.Setup{}, locktest.Redis(1))
		if rec.skipped != (require == "") || rec.failed != (require == "1") || !strings.Contains(rec.text(), "redis-server not available") {
			t.Errorf("LOCKSIM_REQUIRE_REDIS=%q: skipped %v, failed %v: %s", require, rec.skipped, rec.failed, rec.text())
		}
	}
}
