package near

import "testing"

// TestField: a letter off, two swapped, another case, '-' for '_' and a
// letter missing find the field; a name far from every field finds none,
// and so does a tie.
func TestField(t *testing.T) {
	for key, want := range map[string]string{"hodl": "hold", "releas": "release", "Lease": "lease", "extend-every": "extend_every", "xyz": "", "hol": "hold"} {
		if got := Field(key, []string{"hold", "release", "lease", "extend_every", "think"}); got != want {
			t.Errorf("Field(%q) = %q, want %q", key, got, want)
		}
	}
	if got := Field("ab", []string{"aa", "bb"}); got != "" {
		t.Errorf("a tie: %q, want none", got)
	}
}
