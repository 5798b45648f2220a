package scenario

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/checker"
)

// TestExpectKnowsEveryCheckerKind: expectations accept every kind the
// checkers report (checker.Kinds, the one list), resurrected-lock included.
func TestExpectKnowsEveryCheckerKind(t *testing.T) {
	if len(checker.Kinds()) < 9 {
		t.Fatalf("checker.Kinds() = %v", checker.Kinds())
	}
	for _, k := range checker.Kinds() {
		src := strings.Replace(good, "expect: ok", "expect: {violated: ["+string(k)+"]}", 1)
		s, err := Parse("good.yaml", []byte(src))
		if err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		if len(s.Expect.Violated) != 1 || s.Expect.Violated[0] != k {
			t.Errorf("%s: parsed %v", k, s.Expect.Violated)
		}
	}
}
