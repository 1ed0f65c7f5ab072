//go:build race

package pagestore

// raceEnabled: the race detector slows the store's tests about tenfold;
// the heaviest randomized tests run fewer trials under it.
const raceEnabled = true
