package history

import "testing"

// TestWrites: Redis's write commands in either case, not its reads nor
// scripts; a name as a req record or go-redis gives it (lower case), or
// as Redis's table does (upper), is found without a copy.
func TestWrites(t *testing.T) {
	for cmd, want := range map[string]bool{"PEXPIRE": true, "pexpire": true, "Del": true, "xgroup": true,
		"GET": false, "pttl": false, "wait": false, "eval": false, "eval:reentrant_unlock": false} {
		if got := Writes(cmd); got != want {
			t.Errorf("Writes(%q) = %v, want %v", cmd, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Writes("pexpire"); Writes("SET"); Writes("get") }); n != 0 {
		t.Errorf("Writes allocated %v times a call", n)
	}
}
