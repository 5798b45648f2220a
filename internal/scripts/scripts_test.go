package scripts

import "testing"

// TestTagged pins Redis Cluster's hash-tag rule as Tagged applies it: the
// derived keys of a name with a tag hash by that tag; other names are
// wrapped so that they hash as the bare name.
func TestTagged(t *testing.T) {
	for name, want := range map[string]string{
		"orders":         "{orders}",
		"job:42":         "{job:42}",
		"{orders}":       "{orders}",
		"user:{42}:lock": "user:{42}:lock",
		"a{b":            "{a{b}", // no closing brace: hashed whole, and so is "{a{b}"'s tag "a{b"
		"{}x":            "{{}x}", // an empty tag is no tag (unsupported on a Cluster: see README)
	} {
		if got := Tagged(name); got != want {
			t.Errorf("Tagged(%q) = %q, want %q", name, got, want)
		}
	}
}
