//go:build !race

package bufferpool

const raceEnabled = false
