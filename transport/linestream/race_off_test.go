//go:build !race

package linestream

const raceEnabled = false
