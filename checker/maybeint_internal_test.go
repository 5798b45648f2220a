package checker

import (
	"strconv"
	"testing"
)

// TestMaybeIntNeverRefusesAnInteger: every string ParseInt(s, 10, 64)
// accepts passes maybeInt, so the shortcut skips only strings the fencing
// oracle skipped before (all one- and two-byte strings, and a few longer
// ones: signs, tokens, words).
func TestMaybeIntNeverRefusesAnInteger(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if _, err := strconv.ParseInt(s, 10, 64); err == nil && !maybeInt(s) {
			t.Fatalf("maybeInt(%q) = false, but ParseInt accepts it", s)
		}
	}
	check("")
	for a := 0; a < 256; a++ {
		check(string([]byte{byte(a)}))
		for b := 0; b < 256; b++ {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	for _, s := range []string{"+42", "-42", "9223372036854775807", "-9223372036854775808", "007", "OK", "held", "c1-0000002a", " 1", "1_000"} {
		check(s)
	}
	if maybeInt("OK") || maybeInt("") || maybeInt("c1-1") {
		t.Fatal("maybeInt passes what ParseInt refuses at its first byte")
	}
}
