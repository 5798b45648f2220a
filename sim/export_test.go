package sim

// The package's tests run with verifyTruth on: every time the truth timer
// fires, every key the truth knows is re-read and compared, so a change of a
// key that bypassed noteTruth fails the run that made it.
func init() { verifyTruth = true }

// VerifyTruth turns the truth check on or off (the benchmarks measure the
// simulation without it) and returns a function that restores the setting.
func VerifyTruth(on bool) (restore func()) {
	old := verifyTruth
	verifyTruth = on
	return func() { verifyTruth = old }
}

// DrainRecycled empties the pool of recycled history chunks, so that the
// next History starts on new memory.
func DrainRecycled() {
	for recycled.Get() != nil {
	}
}
