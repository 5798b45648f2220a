// Package history is the one record format of a locksim run, shared by the
// simulation (package sim) and the real-server backend (internal/realrun),
// and the only thing the judges (checker, report, compare) read.
//
// A history is a sequence of Records in time order. Each Record has a Kind:
// an op is what a lock's user did and saw (call, return, outcome), a req one
// Redis command a client sent, a fault something done to the world, a truth
// what a node held under a key, node and client records the topology. The
// meaning of each field per kind is in checker/doc.go, which states the
// conventions the oracles rely on.
//
// WriteJSONL writes a history as JSON lines, and ReadJSONL (or ScanJSONL,
// which keeps nothing) reads one back, the same records written by a
// user's own system included, refusing any line a judge would misread
// with an error that names the file, the line and the field (LineError).
//
// The package imports nothing of the project, so that a backend can record
// and a checker can judge without depending on the simulator: a history
// from a real Redis is judged by exactly the code that judges a simulated
// one.
package history
