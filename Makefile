# locksim — see README.md.
GO ?= go

.PHONY: demo test corpus fuzz lint vet detlint staticcheck deadcode gocyclo race bench soak bench-peers report agree real report-real

# The linters make lint runs, pinned: go run fetches each from the module
# proxy the first time (deadcode at the x/tools version go.mod requires).
STATICCHECK = honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    = golang.org/x/tools/cmd/deadcode@v0.52.0
GOCYCLO     = github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0

# demo replays two built-in scenarios (a baseline and F0) on miniredis.
demo:
	$(GO) run ./cmd/simulate demo

# test is what CI runs: vet, the determinism lint, every test under the
# race detector, the whole-corpus tests in full without it, and the
# scenario parser's fuzz targets for a bounded time. It does not run the
# other linters (make lint).
test: vet detlint race corpus fuzz

# corpus runs the tests that compare two ways of computing one thing over
# a whole corpus (every committed scenario, hundreds of random histories
# or sequences) in full, without the race detector. Under it (make race)
# they run one case in four (internal/race): they compare on one goroutine
# at a time, so the detector adds nothing to what they compare, and it
# took 5 to 13 times their time (docs/speed.md). A test that calls
# race.Skip or race.Cases must be listed here, and its package below:
# internal/race's TestCorpusTestsRunInFull fails otherwise.
CORPUS_TESTS = TestRunBoundedSameHistory|TestScenariosSameWithoutTwins|TestSpinMemoMatchesRuns|TestRunScenarios|TestJudgeIndexSameAsWholePasses|TestClosureMemoSameVerdicts
corpus:
	$(GO) test -count=1 -run '^($(CORPUS_TESTS))$$' ./internal/simrun/ ./scenario/ ./sim/ ./cmd/simulate/ ./checker/

# fuzz runs each fuzz target of the scenario parser for FUZZTIME (about 30 s
# in all, with the build): a panic the loader recovers from, or an error
# that does not name the file, fails it. The seed corpus is committed under
# scenario/testdata/fuzz (go test runs it in make race too); a failing input
# the fuzzer finds is written there, to commit with its fix.
FUZZTIME ?= 12s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./scenario/
	$(GO) test -run '^$$' -fuzz '^FuzzParseTriggers$$' -fuzztime $(FUZZTIME) ./scenario/

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

# detlint fails if simulated code paths read the wall clock, sleep, use the
# global math/rand, start goroutines, select, or range over maps.
detlint:
	$(GO) run ./internal/detlint/cmd/detlint

# lint runs every static check: vet and gofmt, detlint, staticcheck,
# deadcode and gocyclo. About two minutes the first time (fetching and
# building the linters), then well under one. make -k lint runs them all
# even when one fails.
lint: vet detlint staticcheck deadcode gocyclo

staticcheck:
	$(GO) run $(STATICCHECK) ./...

# deadcode lists the functions that nothing reaches, tests counted as
# callers. It exits 0 whatever it finds, so any output fails here.
deadcode:
	@dead=$$($(GO) run $(DEADCODE) -test ./...) || exit 1; \
	if [ -n "$$dead" ]; then echo "dead code (deadcode -test):"; echo "$$dead"; exit 1; fi

# gocyclo fails on a function of a non-test file above cyclomatic
# complexity 20 (test files and the linters' test data are left out).
gocyclo:
	$(GO) run $(GOCYCLO) -over 20 -ignore '_test\.go$$|/testdata/' .

# The slowest packages under -race, 3 at a time on 2 cores, are
# cmd/simulate and lock (about 3 minutes each on a slow boot), checker,
# scenario, internal/realrun (real servers, Sentinel, a Redis Cluster,
# worker processes: its tests 4 at a time, 5 one at a time) and compare
# (about 2 each); fuzz adds about 25 s. make test is CPU-bound: its
# packages' CPU over 2 cores is about its wall time.
# The per-package limit is raised above go test's default 10 minutes so
# that a slower machine is not failed by it.
#
# -p 3: internal/realrun spends its time mostly waiting on real time
# (servers, Sentinel elections, scenario durations), and with go test's
# default of one package per core it held one of the two package slots
# the whole time, so the CPU-bound packages ran one at a time beside it:
# make test took about 25% longer without -p 3 (docs/speed.md gives
# its time with it). realrun's replays
# are robust to that load, but for the checks of a real-time bound, which
# retry: the rueidislock replays' 200 ms bound on hearing of a lost lock
# was missed in 2 of 3 runs beside two CPU burners, and run serially.
race:
	$(GO) test -race -count=1 -p 3 -timeout 20m ./...

# bench measures, in one run, the simulator against the raw miniredis
# baseline, and the locks' lock+unlock pairs against raw EVALSHA of the same
# scripts on miniredis and redis-server (the real-server cases need
# redis-server on the PATH), and a slice of make report (the report's table,
# 2 seeds per cell). Summarise bench.txt with benchstat.
bench:
	{ $(GO) test -run '^$$' -bench . -benchtime 3s -count 6 ./sim/ && \
	  $(GO) test -run '^$$' -bench ReportTable -benchtime 1x -count 6 ./compare/ && \
	  $(GO) test -run '^$$' -bench . -benchtime 1s -count 6 ./lock/ ./redlock/ ; } | tee bench.txt

# bench-peers compares the locks with redsync, redislock and raw EVALSHA of
# the same scripts on real redis-servers (needs redis-server on the PATH),
# 6 runs of each, and prints the ratios to the ceiling. bench/ is a module of
# its own, so make test never runs it; see bench/README.md.
bench-peers:
	cd bench && $(GO) test -run '^$$' -bench . -count 6 -timeout 60m | tee bench.txt
	cd bench && $(GO) run ./cmd/ratios bench.txt

# report regenerates the reference comparison report in reports/ (README.md,
# the cells' scenario files, the plots, and .locksim-report, the marker
# without which compare -out refuses to replace a directory): every algorithm under every failure
# mode, 1,000 seeds per cell of the tables and the belief section, 250 per
# curve point elsewhere, 125 per heatmap cell (compare.DefaultCurveSeeds,
# DefaultHeatSeeds). Same seeds, same numbers.
# compare sets its own garbage collection unless GOGC or GOMEMLIMIT is set
# (a 512 MB heap before it collects: compare.TuneGC): the runs allocate
# freely and keep little. CI does not run it; docs/speed.md gives its time.
# It is the only command that writes reports/: compare without -out writes
# into a new directory, and only this command line (-out reports, which a
# test checks) makes the report say "regenerate with make report". To
# split it over machines, see examples/README.md (Sharded sweeps).
report:
	$(GO) run ./cmd/simulate compare -seeds 1000 -out reports

# agree runs every committed scenario in the simulation and on real
# redis-server processes and writes the agreement table into docs/real-redis.md
# (between its markers). Real time: several minutes; needs redis-server.
# CI does not run it.
agree:
	$(GO) run ./cmd/simulate agree -readme docs/real-redis.md

# real runs the real-server tests (internal/redistest, internal/realrun)
# with LOCKSIM_REAL set, which adds the long cases make test leaves out (a
# Sentinel failover of a frozen master, SIGSTOP instead of SIGKILL); it
# needs redis-server and redis-sentinel and fails without them. About two
# minutes. CI does not run it.
real:
	LOCKSIM_REAL=1 LOCKSIM_REQUIRE_REDIS=1 $(GO) test -count=1 -timeout 20m ./internal/redistest/ ./internal/realrun/

# soak runs the long determinism sweep, 2,000 fault-free seeds of every
# baseline scenario (zero false positives), and the fault searches with
# fresh seeds, ten times the checks, the shrinking budget and the correct
# mutex's seeds that make test gives them (not needed by CI), and the
# long-run memory check (scenario.TestSoakMemory: peak RSS of the longest
# and the widest run the limits accept, each in a process of its own), the
# runs at the documented maxima with faults (scenario.TestSoakMaxima:
# 1,000 clients of each simulated kind, a verdict within the checks'
# budget and peak RSS under 3 GiB, each in a process of its own), the
# library's stress runs on a redis-server for a minute each
# (lock/stress_test.go), the correct example lock of one's own
# (examples/ownlock) over 2,000 searched runs and 2,000 seeds, and every
# lane group of the report against its cells' own runs at 3 seeds.
soak:
	LOCKSIM_BASELINE_SEEDS=2000 $(GO) test -count=1 -run BaselinesNoFalsePositives -timeout 60m ./scenario/
	LOCKSIM_SOAK=1 $(GO) test -count=1 -run Determinism -timeout 60m ./sim/
	LOCKSIM_SOAK=1 $(GO) test -count=1 -timeout 60m ./props/
	LOCKSIM_SOAK=1 $(GO) test -count=1 -run '^TestSoakMemory$$' -v -timeout 30m ./scenario/
	LOCKSIM_SOAK=1 $(GO) test -count=1 -run '^TestSoakMaxima$$' -v -timeout 60m ./scenario/
	LOCKSIM_SOAK=1 $(GO) test -count=1 -run 'TestStress' -timeout 10m ./lock/
	LOCKSIM_SOAK=1 $(GO) test -count=1 -run 'TestSetNXSurvives' -timeout 30m ./examples/ownlock/
	LOCKSIM_SOAK=1 $(GO) test -count=1 -run 'TestLaneGroupsSameAsRuns' -timeout 30m ./compare/

# report-real runs each peer library's scenario (scenarios/peers/peer-*.yaml:
# redsync, bsm/redislock, rueidislock) 20 times on real redis-servers (needs
# redis-server on the PATH; about 8 minutes) and writes reports/real/README.md:
# rates with Wilson intervals, the shortest counterexample of each, advice.
# Real runs are not functions of a seed: each invocation measures anew. CI
# does not run it.
report-real:
	$(GO) run ./cmd/realreport -runs 20 -scale 0.2 -out reports/real
