// Package setup is the vocabulary both of locksim's backends share: the
// topology and client configuration (NodeConfig, ReplicaConfig,
// ClientConfig, Persistence, RetryPolicy, LuaMode), distributions of
// durations (Dist), the selection of one operation of a run and the moments
// of its life (OpSelector, OpEvent), link-fault rules (Rule, MsgSet), and
// command arguments as both backends write them (ArgStrings).
//
// It is a leaf: it imports no other package of the project, so that the
// real backend (internal/realrun), the faults, the workloads and the
// scenario format can speak of a run without linking the simulation
// (package sim, with miniredis and a Lua interpreter). Every value here is
// plain data with pure methods; what a backend does with it is the
// backend's.
package setup
