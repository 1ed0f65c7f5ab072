//go:build race

package poolbench

// raceEnabled: the race detector instruments pure-Go compression (about
// 20× slower) but not assembly decompression, which changes the real costs
// the controller weighs; the controller tests run without it (.ci/run).
const raceEnabled = true
