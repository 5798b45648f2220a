package history

// SetMaxLine lowers the longest line ScanJSONL reads to n until the
// returned func restores it.
func SetMaxLine(n int) (restore func()) {
	saved := maxLine
	maxLine = n
	return func() { maxLine = saved }
}
