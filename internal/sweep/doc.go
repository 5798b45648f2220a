// Package sweep runs the many independent, numbered jobs of a sweep: every
// seed of a scenario (simulate run -seeds), every run of the comparison
// matrix (package compare), every real run of the peer libraries' report
// (cmd/realreport). It owns what those commands share, so that each of
// them keeps only its flags, its jobs and its printing:
//
//   - the worker pool (Run, Jobs): jobs claimed in index order on at most
//     -workers goroutines, results stored by index, never by completion,
//     and a clean stop on Ctrl-C (no job claimed after it; those running
//     finish);
//   - chunks with a running tally (Stream): a sweep's memory is that of
//     one chunk, whatever its number of jobs;
//   - -shard K/N (Shard): job i belongs to shard i mod N, or, for jobs
//     that run in units, unit k to shard k mod N (ByUnits);
//   - partial results (Header, WritePartial, ReadPartial): one shard's runs
//     in a JSON file, with what the merge checks that the parts belong
//     together;
//   - the merge (CheckHeaders, Gather): every shard once, each holding
//     exactly the runs it owns, each run valid and unchanged since its shard
//     wrote it, placed back in job order;
//   - the sweep of one scenario over seeds and its partial result
//     (Seeds, RunPartial, MergeRuns), which run -seeds and its merge print.
//
// The simulation itself never starts a goroutine (the determinism lint
// forbids it): a job here is a whole world, run from its seed to its end on
// one goroutine, sharing nothing with the others. Which worker runs which
// job, and in what order they finish, therefore changes nothing a job
// computes; Run makes sure it does not change which jobs ran either, and
// every result reaches its caller in job order. That is what keeps the
// commands' output byte-identical for any -workers and any -shard split.
package sweep
