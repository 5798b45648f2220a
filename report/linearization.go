// Writing Porcupine's visualization of a linearizability check.

package report

import (
	"bytes"
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/locksim/locksim/checker"
)

// WriteLinearizationHTML writes Porcupine's HTML visualization of v (what
// checker.Visualize found: every lock's history, its partial
// linearizations and the annotations) to path, through a temporary file
// and a rename (WriteFile), so path is never half-written and a failed
// write leaves nothing behind. The checker computes what to draw; writing
// files is report's job, so that checker stays free of the file system.
func WriteLinearizationHTML(path string, v checker.Visualization) error {
	var buf bytes.Buffer
	if err := porcupine.Visualize(v.Model, v.Info, &buf); err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	return WriteFile(path, buf.Bytes())
}
