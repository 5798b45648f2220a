// Package difftest holds locksim's differential tests of miniredis against a
// real redis-server: every Lua script of lock/ and redlock/, driven by
// rapid-drawn sequences of operations by several owners with time advances,
// must give the same replies, key state and pub/sub messages on miniredis's
// EVAL, on the simulation's own script runner (setup.LuaFast) and on a real
// redis-server. The package has no code of its own; see diff_test.go.
package difftest
