// Package props holds locksim's property suites: rapid searches for fault
// schedules that break each lock algorithm, pinned to the known facts about
// them, and the controls that show the checkers find what they should and
// nothing else. The package has no code of its own outside its tests.
package props
