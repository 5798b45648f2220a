// Command detlint reports sources of nondeterminism (wall clock, global
// random source, goroutines, select, map iteration order) in the packages
// that run inside the locksim simulation, so that a seed always reproduces
// the same run.
//
// Usage, from the module root:
//
//	go run ./internal/detlint/cmd/detlint [patterns...]
//
// With no patterns it checks detlint.DefaultPatterns. Patterns whose
// directory does not exist yet are skipped. It prints one finding per line
// and exits 1 if there are findings, 2 if the packages fail to load, and 0
// when clean.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locksim/locksim/internal/detlint"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: detlint [patterns...]\n\ndefault patterns: %v\n", detlint.DefaultPatterns)
		flag.PrintDefaults()
	}
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = detlint.DefaultPatterns
	}
	os.Exit(run(patterns))
}

// run does the work of main and returns the exit code, so main stays a thin
// wrapper around os.Exit.
func run(patterns []string) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "detlint:", err)
		return 2
	}
	patterns = detlint.ExistingPatterns(wd, patterns)
	if len(patterns) == 0 {
		return 0
	}
	findings, err := detlint.Check(wd, patterns...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for _, f := range findings {
		// Print paths relative to the working directory: shorter, and still
		// clickable in editors and CI logs.
		if rel, err := filepath.Rel(wd, f.Pos.Filename); err == nil {
			f.Pos.Filename = rel
		}
		fmt.Println(f)
	}
	if len(findings) > 0 {
		return 1
	}
	return 0
}
