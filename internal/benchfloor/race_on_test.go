//go:build race

package benchfloor

const raceEnabled = true
