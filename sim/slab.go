package sim

// slab hands out runs of Ts cut from arrays that many runs share: one
// allocation per array instead of one per run, for the small values a run
// of the simulation makes by the thousand and keeps to its end (a
// request's command, an id, an op). No element is handed out twice, so
// what a caller writes into its run stays as written; the values that
// hold a run keep its array alive.
type slab[T any] []T

// cut returns n new elements (length and capacity n: an append copies
// them first), starting a new array of size elements when fewer than n
// are left. n must be at most size.
func (s *slab[T]) cut(n, size int) []T {
	if len(*s) < n {
		*s = make([]T, size)
	}
	out := (*s)[:n:n]
	*s = (*s)[n:]
	return out
}
