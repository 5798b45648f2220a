package compare

import (
	"testing"

	"github.com/locksim/locksim/internal/sweep"
)

// BenchmarkReportTable runs the report's table, every failure mode at its
// reference intensity for every algorithm, at 2 seeds per cell on one
// worker: a slice of make report's work (a third of its runs are table
// runs, and the curves and heatmap run the same scenarios at other
// intensities), so that a regression of a report's cost shows without
// running make report. It reports runs/s and the CPU per run. The garbage
// collector is set as simulate compare sets it (TuneGC).
func BenchmarkReportTable(b *testing.B) {
	m, err := build(Options{Seeds: 2, TableOnly: true, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	benchJobs(b, m, 1)
}

// benchJobs runs m's jobs b.N times on the given number of workers and
// reports the CPU per run and runs/s.
func benchJobs(b *testing.B, m *matrix, workers int) {
	defer TuneGC()()
	m.opts.Workers = workers
	jobs := m.jobs()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := ProcessCPU()
	for i := 0; i < b.N; i++ {
		if _, err := runJobs(b.Context(), jobs, sweep.Shard{}.Jobs(len(jobs)), m.opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ProcessCPU()-cpu)/float64(len(jobs)*b.N), "cpu-ns/run")
	b.ReportMetric(float64(len(jobs)*b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkReport runs the whole reference report's mix, its cells in the
// proportions make report runs them (table and belief cells 8 seeds, the
// curves' other intensities 2, the heatmap 1: make report's 1,000, 250
// and 125 divided by 125), on one worker: its CPU per run is make
// report's CPU per run, without writing the report (about 1,950 runs).
func BenchmarkReport(b *testing.B) {
	m, err := build(Options{Seeds: 8, CurveSeeds: 2, HeatSeeds: 1, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	benchJobs(b, m, 1)
}

// BenchmarkReportTwoWorkers is BenchmarkReport on two workers, as make
// report runs on this machine's two cores: its profile is make report's
// (the CPU a run takes there includes what two workers contend for).
func BenchmarkReportTwoWorkers(b *testing.B) {
	m, err := build(Options{Seeds: 8, CurveSeeds: 2, HeatSeeds: 1, Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	benchJobs(b, m, 2)
}
