// Package bench compares locksim's locks with their peers on a real
// redis-server: go-redsync/redsync, bsm/redislock, and raw go-redis EVALSHA
// of locksim's own scripts, the ceiling every figure is divided by. It is a
// module of its own so that the peers never enter locksim's go.mod; the
// benchmarks are in its _test.go files and README.md says how to run them.
package bench
