//go:build !race

package benchfloor

const raceEnabled = false
