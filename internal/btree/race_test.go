//go:build race

package btree

// raceEnabled: the race detector slows the single-goroutine model tests
// of node edits (edit_test.go) about tenfold and finds nothing in them, so
// they run fewer steps under it.
const raceEnabled = true
