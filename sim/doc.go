// Package sim is locksim's deterministic world: virtual time, an event queue,
// seeded randomness split per component, cooperative processes, simulated
// Redis nodes (miniredis in-process) with replication, failover, crashes and
// per-node clocks, a lossy network, and the recorded history. A world is
// configured in package setup's vocabulary (NodeConfig, ClientConfig, Rule,
// OpSelector), which the real backend shares without linking this package.
//
// One seed gives one history. Nothing here reads the wall clock or lets
// goroutine scheduling or map order decide anything: exactly one simulated
// process runs at a time, and it runs only while it holds the world's baton.
//
// Where things are:
//
//   - world.go: the World, its scheduler (At, Run, Close), and the
//     per-component random streams.
//   - events.go: the event queue (a heap by time and scheduling order) and
//     what an event runs.
//   - proc.go: cooperative processes (coroutines) and the baton; waiters
//     and sleeps.
//   - clock.go: a machine's clock (drift, jumps), for nodes and clients.
//   - net.go: the network between clients and nodes: latencies drawn from
//     each client's setup.Dist, link-fault rules (setup.Rule, held with
//     their op binding), partitions, FIFO delivery on each connection (a
//     command's own for its round trip, a subscription's own).
//   - node.go: a node and its group (AddNode, AddReplica), booting
//     miniredis, the node's clock faults, looking nodes and groups up.
//   - command.go: a client command at a node: the commands whose keys a
//     node knows, dispatch to miniredis or Lua, the write hook, and what
//     follows a write (replicate, log, truth, publish).
//   - keystate.go: a key's whole state (keyState), reading and setting it on
//     miniredis, and the ground truth (truth records, expiry timers).
//   - expiry.go: how keys' TTLs follow the node's clock one key at a time
//     (no full scan per command), and the truth's index of expiries.
//   - persist.go: what each persistence mode (setup.Persistence) keeps,
//     node crash and restart.
//   - repl.go: replication streams to replicas, WAIT, and Failover.
//   - lua.go: the fast Lua engine for EVAL and EVALSHA (setup.LuaMode).
//   - native.go: the lock library's hot scripts as Go twins of their text,
//     which LuaFast runs in their place.
//   - resp.go: reading the replies miniredis writes.
//   - client.go: a client process (AddClient), its pause, crash and clock
//     faults, and its lock.Runtime (time, sleeps, timers, Parallel).
//   - evalwait.go: the synced acquire's script and WAIT as one request
//     (lock.EvalWaiter), retried whole as go-redis's pipeline is.
//   - conn.go: a client's lock.Conn: round trips with timeouts and the
//     client's setup.RetryPolicy, req records; a request whose context
//     had ended is refused unsent with lock.ErrNotSent, as
//     lock.RedisConn refuses it.
//   - pubsub.go: subscriptions, publishing to subscribers, and their loss
//     when the node crashes.
//   - ctxwait.go: waits (Sleep, Subscription.Next) that end when their
//     context is cancelled by simulated code, seen by the scheduler after
//     every event.
//   - history.go: the run's History, op records (Client.BeginOp) and fault
//     records.
//   - trigger.go: faults bound to an operation (OnOp, setup.Rule's Op)
//     instead of an instant.
package sim
