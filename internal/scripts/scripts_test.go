package scripts

import (
	"strings"
	"testing"
)

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

// TestKeySlot pins KeySlot to slots Redis computes (CLUSTER KEYSLOT, and
// the CRC16 test vector of the Redis Cluster specification): the whole key
// without a tag, the tag with one, and the degenerate tags hashed whole.
// lock's TestKeySlotMatchesRedis checks it against a redis-server too.
func TestKeySlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31c3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3 (the Cluster specification's test vector)", got)
	}
	for key, want := range map[string]int{
		"":              0,
		"foo":           12182,
		"bar":           5061,
		"somekey":       11058,
		"{user1000}.a":  3443,
		"{user1000}.b":  3443,
		"user1000":      3443,
		"foo{}{bar}":    8363, // an empty first tag: the whole key
		"foo{{bar}}zap": 4015, // the tag is "{bar"
		"foo{bar}{zap}": 5061, // the first tag only: "bar"
	} {
		if got := KeySlot(key); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestIsLibrary: every embedded script is the library's (the simulation
// runs those without the wall-clock limit it puts on a user's), and a
// script made from other text, or from a library script's text edited, is
// not.
func TestIsLibrary(t *testing.T) {
	files, err := scriptFS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		src, err := scriptFS.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		// New, not must, which would register it.
		if s := New(strings.TrimSuffix(f.Name(), ".lua"), string(src)); !IsLibrary(s.SHA) {
			t.Errorf("%s is not the library's", f.Name())
		}
	}
	if len(files) < 20 {
		t.Fatalf("only %d embedded scripts", len(files))
	}
	for _, src := range []string{"return 1", ReentrantAcquire.Src + " "} {
		if IsLibrary(New("mine", src).SHA) {
			t.Errorf("%q is the library's", src)
		}
	}
}
