package history

import "testing"

// TestParseWaitDetailSameAsScanner compares ParseWaitDetail, which reads
// WaitDetail's own text by hand, with fmt's scanner (scanWaitDetail) on
// WaitDetail's texts and on texts near them: every answer, the numbers of
// a text that is not ok included, must be the scanner's. The control
// asserts that the hand parser does read the exact texts (a parser that
// always left them to the scanner would pass the comparison unseen).
func TestParseWaitDetailSameAsScanner(t *testing.T) {
	var texts []string
	for _, a := range []int64{0, 1, 2, 3, 7, 10, 99, 12345} {
		for _, r := range []int{0, 1, 2, 3, 5, 10, 100} {
			texts = append(texts, WaitDetail(a, r))
		}
	}
	texts = append(texts,
		"", "1", "1 of", "1 of 2", "1 of 2 replicas", "1 of 2 replicas lost",
		"1 of 2 replicas acknowledged ", "1 of 2 replicas acknowledged extra", " 1 of 2 replicas acknowledged",
		"1  of 2 replicas acknowledged", "1 of  2 replicas acknowledged", "1 of 2  replicas acknowledged",
		"+1 of 2 replicas acknowledged", "-1 of 2 replicas acknowledged", "1 of -2 replicas acknowledged",
		"01 of 002 replicas acknowledged", "0x1 of 2 replicas acknowledged", "1_0 of 2 replicas acknowledged",
		"1 of 2 replicas acknowledgedx", "1 of 2 replicas Acknowledged", "a of 2 replicas acknowledged",
		"1 of 2 of 3 replicas acknowledged", "1 of 2 replicas replicas acknowledged",
		"99999999999999999999 of 2 replicas acknowledged", "1 of 99999999999999999999 replicas acknowledged",
		"9223372036854775807 of 9223372036854775807 replicas acknowledged",
		"1 of 2 replicas\nacknowledged", "1\tof 2 replicas acknowledged", "lost", "1 of 2 replicas acknowledged;")
	exact := 0
	for _, s := range texts {
		a, r, ok := ParseWaitDetail(s)
		wa, wr, wok := scanWaitDetail(s)
		if a != wa || r != wr || ok != wok {
			t.Errorf("ParseWaitDetail(%q) = %d, %d, %v; the scanner reads %d, %d, %v", s, a, r, ok, wa, wr, wok)
		}
		if _, _, ok := parseWaitExact(s); ok {
			exact++
		}
	}
	for _, a := range []int64{0, 1, 12345} {
		if _, _, ok := parseWaitExact(WaitDetail(a, 3)); !ok {
			t.Errorf("parseWaitExact(%q) is not ok: WaitDetail's own text goes to the scanner", WaitDetail(a, 3))
		}
	}
	if exact < 56 {
		t.Errorf("parseWaitExact read %d texts by hand, want at least WaitDetail's 56", exact)
	}
}
