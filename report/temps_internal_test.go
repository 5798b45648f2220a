package report

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestStopTemps: after StopTemps no write makes a temporary file (the gate
// a second Ctrl-C closes before it removes those there are, so that none
// appears after the removal): WriteFile and TempDir fail with
// ErrTempsStopped and the directory stays empty; before it (the control)
// WriteFile writes its file and leaves no temporary one.
func TestStopTemps(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "a.txt"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	StopTemps()
	defer func() {
		temps.mu.Lock()
		temps.stopped = false
		temps.mu.Unlock()
	}()
	if err := WriteFile(filepath.Join(dir, "b.txt"), []byte("b")); !errors.Is(err, ErrTempsStopped) {
		t.Fatalf("WriteFile after StopTemps: %v", err)
	}
	if _, err := TempDir(dir, ".x-*"); !errors.Is(err, ErrTempsStopped) {
		t.Fatalf("TempDir after StopTemps: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "a.txt" {
		t.Fatalf("the directory holds %v, want a.txt alone", entries)
	}
}
