package lock

import (
	"embed"
	"fmt"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// mustScript loads an embedded script; a missing file is a build mistake.
func mustScript(name string) *Script {
	src, err := scriptFS.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("lock: embedded script %s: %v", name, err))
	}
	return NewScript(name, string(src))
}

// Scripts of the simple lock.
var (
	// SimpleRelease is compare-and-delete with an optional release latch:
	// KEYS[1] the lock key, KEYS[2] (optional) the latch
	// (ReleaseLatchKey), ARGV[1] the token, ARGV[2] the latch's TTL in
	// milliseconds. It returns 1 when it deleted the key, or when the latch
	// shows an earlier run of the same release did (a retry whose first
	// reply was lost), else 0. SimpleLock and the spec's RedLock (on every
	// node) release with it.
	SimpleRelease = mustScript("simple_release")
)

// ReleaseLatchKey is the release latch SimpleRelease leaves for the
// acquisition of key that holds token. It lives in key's slot (tagged), so
// that the script's two keys hash alike on a Cluster.
func ReleaseLatchKey(key, token string) string {
	return "simple_unlock_latch:" + tagged(key) + ":" + token
}
