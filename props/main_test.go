package props_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines once, after all tests: the suites
// run their seeds in parallel subtests, which a per-test check would see.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
