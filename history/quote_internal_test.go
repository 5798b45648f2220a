package history

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestQuoteIsStrconvQuote: quote's shortcut for plain ASCII gives what
// strconv.Quote gives, for every string of one and two bytes (each byte
// value, so every character the shortcut must refuse: controls, '"', '\\',
// DEL, non-ASCII and broken UTF-8) and for random strings mixing them with
// lock tokens' characters; a reply quoted differently would change every
// history and report.
func TestQuoteIsStrconvQuote(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := quote(s), strconv.Quote(s); got != want {
			t.Fatalf("quote(%q) = %s, strconv.Quote = %s", s, got, want)
		}
	}
	check("")
	for a := 0; a < 256; a++ {
		check(string([]byte{byte(a)}))
		for b := 0; b < 256; b++ {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("c1-0123456789abcdef.:{}lk \"\\\t\n\x00\x7f\xc3\xa9\xff")
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(8) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = alphabet[rng.IntN(17)] // a token's characters
			}
		}
		check(string(b))
	}
	check("c1-0000002a.3w5e11264sgsf")
	check("héllo")
}
