package history

// Operation names of op records: what a lock's user did. Workloads record
// them and checkers match on them, so both use these constants.
const (
	OpAcquire     = "acquire"      // took the lock (Args[0] the owner for reentrant locks; Result a token)
	OpRelease     = "release"      // gave it back (Result "1" released, "0" not held)
	OpAcquireRead = "acquire-read" // took a read lock's share
	OpReleaseRead = "release-read" // gave a read share back
	OpExpire      = "expire"       // the holder's belief that it holds ended (its lease estimate ran out, or it learned of a loss)
	OpExtend      = "extend"       // renewed a lease (the spec's RedLock)
	OpWrite       = "write"        // a fenced write to the protected resource (Lock names the resource)
)

// opNames are the operations above, every one: a history read back
// (ReadJSONL) whose op record names another is refused, as no checker
// would know what it did. A new operation is added here too.
var opNames = []string{OpAcquire, OpRelease, OpAcquireRead, OpReleaseRead, OpExpire, OpExtend, OpWrite}

// Command names of req records that the checkers single out.
const (
	ReqWait        = "wait"        // WAIT numreplicas timeout (Detail: WaitDetail)
	ReqSubscribe   = "subscribe"   // a pub/sub subscription started (Args the channel)
	ReqUnsubscribe = "unsubscribe" // and ended
)

// Roles of node records.
const (
	RoleMaster  = "master"
	RoleReplica = "replica"
)

// Fault names of fault records. A fault kind of package faults records one
// of these (or, for a message the network lost, "lost-" and "drop-"/"delay-"
// followed by the message's direction).
const (
	FaultFailover        = "failover"          // Node the group, Value the new master
	FaultCrash           = "crash"             // a node crashed
	FaultRestart         = "restart"           // a node restarted
	FaultPause           = "pause"             // a node or client stopped running
	FaultResume          = "resume"            // and ran again
	FaultPartition       = "partition"         // the network split (Detail: the sides and window)
	FaultHeal            = "heal"              // a partition ended
	FaultNetRule         = "net-rule"          // a link fault started (Detail: what and when)
	FaultClockJump       = "clock-jump"        // a clock moved at once
	FaultClockDrift      = "clock-drift"       // a clock runs fast or slow
	FaultClientCrash     = "client-crash"      // a client process died
	FaultDuplicate       = "duplicate-request" // the network delivered a request twice
	FaultHoldReplication = "hold-replication"  // a master stopped shipping to its replicas (real servers)
	FaultSkipped         = "skipped"           // a fault that could not act (Detail: why; Value: SkippedScripted for a scripted fault)
	FaultTriggerUnfired  = "trigger-unfired"   // a triggered fault whose trigger never fired
)

// SkippedScripted is the Value of a FaultSkipped record of a fault the
// scenario scripted (at a time of its own, or bound to an operation), as
// opposed to one drawn from rates (no Value): a scripted fault that could
// not act makes the run not show what the scenario describes.
const SkippedScripted = "scripted"
