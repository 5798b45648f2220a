package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/locksim/locksim/internal/redistest"
	"github.com/locksim/locksim/setup"
)

// TestRedisWritesAsRedis holds redisWrites, and so which commands a
// replica refuses, to a redis-server's command table: every command the
// server flags "write" is a write for isWrite, and no other is, but the
// scripts (which the simulation refuses on replicas, its scripts being the
// locks') and the commands this server does not know (a newer Redis's).
func TestRedisWritesAsRedis(t *testing.T) {
	defer goleak.VerifyNone(t)
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, DisableIdentity: true})
	defer rc.Close()
	table, err := rc.Command(context.Background()).Result()
	must(t, err)
	if len(table) < 100 {
		t.Fatalf("COMMAND listed %d commands", len(table))
	}
	for name, c := range table {
		cmd := strings.ToUpper(name)
		flagged := false
		for _, f := range c.Flags {
			flagged = flagged || f == "write"
		}
		spec, _ := lookupCommand(cmd)
		got := isWrite(cmd, spec)
		switch {
		case cmd == "EVAL" || cmd == "EVALSHA" || cmd == "XGROUP":
			if !got {
				t.Errorf("%s: not a write for isWrite", cmd)
			}
		case got != flagged:
			t.Errorf("%s: isWrite %v, redis-server's table flags write %v", cmd, got, flagged)
		}
	}
}

// TestReplicaRefusesWrites: a replica answers READONLY to a write of a
// command outside the node's table (SADD, LMOVE, SORT) as to one inside
// it, and runs the reads; the master's state reaches it only by
// replication. A command refused inside MULTI, or one Redis does not
// know, makes the EXEC answer EXECABORT, as on a redis-server 7.0.
func TestReplicaRefusesWrites(t *testing.T) {
	w := New(1)
	defer w.Close()
	m, err := w.AddNode(setup.NodeConfig{Name: "m1"})
	must(t, err)
	r, err := w.AddReplica("m1", setup.NodeConfig{Name: "r1"}, setup.ReplicaConfig{Lag: setup.Fixed(time.Millisecond)})
	must(t, err)
	runExecSteps(t, w, 10*time.Millisecond, []execStep{
		{m, []string{"SADD", "s", "a"}, "1"},
		{r, []string{"SADD", "s", "b"}, "READONLY"},
		{r, []string{"SET", "k", "v"}, "READONLY"},
		{r, []string{"LMOVE", "l", "l2", "LEFT", "RIGHT"}, "READONLY"},
		{r, []string{"SORT", "s", "ALPHA"}, "READONLY"},
		{r, []string{"SMEMBERS", "s"}, "[a]"},
		{r, []string{"SCARD", "s"}, "1"},
		// Inside MULTI the refusal aborts the transaction, as on a
		// redis-server 7.0 replica.
		{r, []string{"MULTI"}, "OK"},
		{r, []string{"SET", "k", "v"}, "READONLY"},
		{r, []string{"SCARD", "s"}, "QUEUED"},
		{r, []string{"EXEC"}, "EXECABORT"},
		{r, []string{"SCARD", "s"}, "1"},
		// An unknown command aborts it too (Redis's rule, which miniredis
		// does not follow by itself).
		{m, []string{"MULTI"}, "OK"},
		{m, []string{"NOSUCHCOMMAND", "x"}, "unknown command"},
		{m, []string{"SADD", "s", "z"}, "QUEUED"},
		{m, []string{"EXEC"}, "EXECABORT"},
		{m, []string{"SCARD", "s"}, "1"},
	})
}
