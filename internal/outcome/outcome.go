// Package outcome marks an error whose outcome is unknown although it
// wraps errors that each say what happened: errors joined from several
// requests (a RedLock's nodes, a multilock's members) of which one may have
// run or not. lock.IsUnknown reports true for such an error; without the
// mark it answers for the whole by its known parts, since errors.Is
// searches every branch of a join.
package outcome

// Unknown is an error whose outcome is unknown, whatever Err wraps.
type Unknown struct{ Err error }

func (e *Unknown) Error() string { return e.Err.Error() }

// Unwrap gives the wrapped error to errors.Is and errors.As.
func (e *Unknown) Unwrap() error { return e.Err }
