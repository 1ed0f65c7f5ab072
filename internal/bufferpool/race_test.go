//go:build race

package bufferpool

// raceEnabled: the race detector keeps shadow memory for every byte the
// pool's arenas touch, so the process's RSS says nothing about the budget;
// and it slows memory accesses 5–10×, so stress tests run fewer rounds.
const raceEnabled = true
