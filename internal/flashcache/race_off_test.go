//go:build !race

package flashcache

const raceEnabled = false
