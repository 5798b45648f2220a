package compare

import (
	"testing"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/internal/simrun"
)

// BenchmarkJudgeTable times what a report's run costs after its world
// ran: the scenario's verdict (checker.Judge) and the run's summary, on
// the histories of the report's table at one seed per cell, recorded
// once before the timer. It reports the CPU per run, as BenchmarkReport
// does for the whole run: the judging part alone varies far less from
// run to run than the simulation around it, so that a change to the
// checks shows here when BenchmarkReport's noise hides it. The garbage
// collector is set as simulate compare sets it (TuneGC).
func BenchmarkJudgeTable(b *testing.B) {
	m, err := build(Options{Seeds: 1, TableOnly: true, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	type run struct {
		j    job
		recs []history.Record
		end  time.Duration
	}
	var runs []run
	for _, j := range m.jobs() {
		r, err := simrun.Run(j.cell.Scenario, j.seed)
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, run{j, r.History.Records(), r.End})
	}
	defer TuneGC()()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := ProcessCPU()
	for i := 0; i < b.N; i++ {
		for _, r := range runs {
			v := r.j.cell.Scenario.Check(r.recs, r.end)
			summary(r.j.seed, v, r.recs, r.end)
		}
	}
	b.ReportMetric(float64(ProcessCPU()-cpu)/float64(len(runs)*b.N), "cpu-ns/run")
}
