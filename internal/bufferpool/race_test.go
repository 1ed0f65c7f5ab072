//go:build race

package bufferpool

// raceEnabled: the race detector slows memory accesses 5–10×; stress
// tests run fewer rounds under it.
const raceEnabled = true
