//go:build !race

package poolbench

const raceEnabled = false
