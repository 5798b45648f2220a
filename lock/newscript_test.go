package lock_test

import (
	"testing"

	"github.com/locksim/locksim/lock"
)

// TestNewScript: a user's script carries the SHA1 of its source, which
// EVALSHA names it by (the SHA1 of "return 1", as redis-cli SCRIPT LOAD
// answers it).
func TestNewScript(t *testing.T) {
	s := lock.NewScript("one", "return 1")
	if s.Name != "one" || s.Src != "return 1" || s.SHA != "e0e1f9fabfc9d4800c877a703b823ac0578ff8db" {
		t.Fatalf("NewScript: %+v", *s)
	}
}
