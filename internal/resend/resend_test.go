package resend

import (
	"context"
	"testing"
)

// TestForbid: Forbid marks a context and keeps its cancellation; a context
// marked already, and context.Background(), cost no new context.
func TestForbid(t *testing.T) {
	bg := context.Background()
	if Forbidden(bg) {
		t.Fatal("Background is marked")
	}
	if !Forbidden(Forbid(bg)) {
		t.Error("Forbid(Background) is not marked")
	}
	parent, cancel := context.WithCancel(bg)
	marked := Forbid(parent)
	if !Forbidden(marked) || Forbidden(parent) {
		t.Errorf("Forbidden: marked %v, parent %v; want true, false", Forbidden(marked), Forbidden(parent))
	}
	if again := Forbid(marked); again != marked {
		t.Error("Forbid of a marked context made a new one")
	}
	cancel()
	if marked.Err() == nil {
		t.Error("the marked context did not end with its parent")
	}
	allocs := testing.AllocsPerRun(100, func() {
		if Forbid(bg) == nil || Forbid(marked) != marked {
			t.Fatal("Forbid")
		}
	})
	if allocs != 0 {
		t.Errorf("Forbid of Background or of a marked context allocates %v times", allocs)
	}
}
