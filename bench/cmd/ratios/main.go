// Command ratios reads `go test -bench` output of this module's benchmarks
// and prints, for every case, each implementation's ratio to the ceiling
// (the impl named raw-*): the median, and the range, of the per-run ratios.
// Every run of a case measures all of its impls in turns over the same
// seconds, so each run gives one ratio; these are the tables of README.md.
//
//	go run ./cmd/ratios bench.txt                # time per operation
//	go run ./cmd/ratios -metric acq bench.txt    # acquire latency
//	go run ./cmd/ratios -base redsync bench.txt  # against redsync instead
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// procs is the -GOMAXPROCS suffix go test appends to benchmark names.
var procs = regexp.MustCompile(`-\d+$`)

func main() {
	metric := flag.String("metric", "ns", "ns: wall time per operation; acq: mean acquire latency; acquired: fraction of attempts that got the lock (absolute, same key only)")
	base := flag.String("base", "", "the impl to divide by (default: the raw-* ceiling of each benchmark)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: ratios [-metric ns|acq|acquired] [-base IMPL] [bench.txt ...] (default: standard input)")
		flag.PrintDefaults()
	}
	flag.Parse()
	suffix, ok := map[string]string{"ns": "-ns/op", "acq": "-acq-ns/op", "acquired": "-acquired/op"}[*metric]
	if !ok {
		fmt.Fprintf(os.Stderr, "ratios: unknown -metric %q\n", *metric)
		os.Exit(2)
	}
	var in io.Reader = os.Stdin
	if flag.NArg() > 0 {
		var rs []io.Reader
		for _, name := range flag.Args() {
			f, err := os.Open(name)
			if err != nil {
				fmt.Fprintln(os.Stderr, "ratios:", err)
				os.Exit(2)
			}
			defer f.Close()
			rs = append(rs, f)
		}
		in = io.MultiReader(rs...)
	}
	runs, order, err := read(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratios:", err)
		os.Exit(2)
	}
	if len(order) == 0 {
		fmt.Fprintln(os.Stderr, "ratios: no benchmark results")
		os.Exit(1)
	}
	print(os.Stdout, runs, order, suffix, *base, *metric == "acquired")
}

// run is one result line: its metrics by unit.
type run map[string]float64

func read(r io.Reader) (map[string][]run, []string, error) {
	runs := map[string][]run{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := procs.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		m := run{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", f[0], f[i], err)
			}
			m[f[i+1]] = v
		}
		if _, seen := runs[name]; !seen {
			order = append(order, name)
		}
		runs[name] = append(runs[name], m)
	}
	return runs, order, sc.Err()
}

// impls lists the impls of a result line, the ceiling first, then
// locksim's, then the peers.
func impls(m run) []string {
	var out []string
	for unit := range m {
		if im, ok := strings.CutSuffix(unit, "-ns/op"); ok && !strings.HasSuffix(im, "-acq") {
			out = append(out, im)
		}
	}
	rank := func(s string) int {
		switch {
		case strings.HasPrefix(s, "raw-"):
			return 0
		case strings.HasPrefix(s, "locksim-"):
			return 1
		}
		return 2
	}
	slices.SortFunc(out, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return out
}

// split cuts RedLock/nodes=5/keys=same/g=8 into "RedLock/nodes=5" and
// "keys=same g=8".
func split(name string) (group, row string) {
	i := strings.Index(name, "/keys=")
	if i < 0 {
		return name, ""
	}
	return name[:i], strings.ReplaceAll(name[i+1:], "/", " ")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func print(w io.Writer, runs map[string][]run, order []string, suffix, base string, absolute bool) {
	group := ""
	for _, name := range order {
		rs := runs[name]
		ims := impls(rs[0])
		b := base
		if b == "" {
			b = ims[0]
		}
		g, row := split(name)
		if g != group {
			group = g
			what := "median ratio to " + b + " over the runs (range)"
			if absolute {
				what = "median over the runs"
			}
			fmt.Fprintf(w, "\n%s: %s, %s\n\n", g, strings.TrimPrefix(suffix, "-"), what)
			fmt.Fprintf(w, "| case | %s |\n|---|%s\n", strings.Join(ims, " | "), strings.Repeat("---|", len(ims)))
		}
		cells := make([]string, len(ims))
		for i, im := range ims {
			var xs []float64
			for _, r := range rs {
				v, ok := r[im+suffix]
				d, okd := r[b+suffix]
				switch {
				case !ok:
				case absolute:
					xs = append(xs, v)
				case okd && d > 0:
					xs = append(xs, v/d)
				}
			}
			switch {
			case len(xs) == 0:
				cells[i] = "-"
			case absolute:
				cells[i] = fmt.Sprintf("%.3f", median(xs))
			case im == b:
				var abs []float64
				for _, r := range rs {
					abs = append(abs, r[im+suffix])
				}
				cells[i] = fmt.Sprintf("1 (%s, n=%d)", human(median(abs)), len(abs))
			default:
				cells[i] = fmt.Sprintf("%.2f (%.2f–%.2f)", median(xs), slices.Min(xs), slices.Max(xs))
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", row, strings.Join(cells, " | "))
	}
}

// human prints nanoseconds in µs or ms.
func human(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}
