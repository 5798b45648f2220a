package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestChunksDoNotChangeResults: Run adds the outcomes to their cells a
// chunk at a time (so that it never holds them all); chunks of 5 runs,
// which split cells and seeds across chunks, give the report the chunk of
// 4096 gives, and the progress counts every run once, in order.
func TestChunksDoNotChangeResults(t *testing.T) {
	defer func(n int) { runChunk = n }(runChunk)
	var readmes [][]byte
	for _, chunk := range []int{4096, 5} {
		runChunk = chunk
		last, total := 0, 0
		opts := Options{Seeds: 3, TableOnly: true, Workers: 2, Modes: Modes[:2], Algorithms: Algorithms[:2],
			ScenarioDir: "reports/scenarios",
			Progress: func(done, n int) {
				if done != last+1 {
					t.Errorf("chunk %d: progress %d after %d", chunk, done, last)
				}
				last, total = done, n
			}}
		res, err := Run(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 * 2 * 3; last != want || total != want {
			t.Errorf("chunk %d: progress ended at %d of %d, want %d", chunk, last, total, want)
		}
		dir := filepath.Join(t.TempDir(), "reports")
		if err := res.Write(t.Context(), dir, "simulate compare (test)"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		readmes = append(readmes, b)
	}
	if !bytes.Equal(readmes[0], readmes[1]) {
		t.Error("chunks of 5 runs change the report")
	}
}
