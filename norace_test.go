//go:build !race

package strata

const raceEnabled = false
