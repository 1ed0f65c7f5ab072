//go:build race

package flashcache

// raceEnabled: the race detector makes the cache's tests several times
// slower (the pool's compressions, MemFS copies); the heaviest randomized
// tests run fewer operations or crash points under it, and .ci/run runs
// them in full without it.
const raceEnabled = true
