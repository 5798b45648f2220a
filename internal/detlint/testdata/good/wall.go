package good

//detlint:file-allow wallclock,goroutine,select production runtime: real clock and real goroutines

import "time"

// Wall is the production clock, exempt for the whole file.
func Wall(f func()) time.Time {
	t := time.NewTimer(time.Second)
	go f()
	select {
	case <-t.C:
	default:
	}
	return time.Now()
}
