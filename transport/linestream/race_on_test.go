//go:build race

package linestream

const raceEnabled = true
