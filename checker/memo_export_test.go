package checker

// SetMemoClosures turns the sweeps' closure memo on or off (memoClosures)
// and returns the function that puts it back.
func SetMemoClosures(on bool) (restore func()) {
	was := memoClosures
	memoClosures = on
	return func() { memoClosures = was }
}

// MemoHits is how many closures the sweeps' memos have answered so far in
// this process (memoHits).
func MemoHits() int64 { return memoHits.Load() }
