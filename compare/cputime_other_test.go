//go:build !unix

package compare

import "time"

// ProcessCPU is 0 where getrusage is missing: the cpu-ns/op metric then
// reads 0.
func ProcessCPU() time.Duration { return 0 }
