//go:build race

package strata

// raceEnabled: the race detector keeps shadow memory for every byte, so
// the process's RSS says nothing about the engine's bound.
const raceEnabled = true
