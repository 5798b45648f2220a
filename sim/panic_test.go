package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/setup"
)

// TestProcessPanicIsABug: a process that panics fails the world's Run with
// an error wrapping ErrPanicked (which the command line reports as an
// internal error, exit 3), naming the process.
func TestProcessPanicIsABug(t *testing.T) {
	w := New(1)
	defer w.Close()
	c, err := w.AddClient(setup.ClientConfig{Name: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	c.Go("worker", func() { panic("boom") })
	err = w.Run(time.Second)
	if !errors.Is(err, ErrPanicked) || !strings.Contains(err.Error(), "process c1/worker panicked") {
		t.Fatalf("Run: %v", err)
	}
}
