//go:build !race

package codec

// raceEnabled reports a -race build, in which sync.Pool drops a random
// share of what it is given, so pooled state gets reallocated.
const raceEnabled = false
