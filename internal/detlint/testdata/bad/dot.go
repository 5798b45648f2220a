package bad

import . "time"

// DotImport reaches the wall clock through a dot import.
func DotImport() Time {
	return Now() // want "wallclock"
}
