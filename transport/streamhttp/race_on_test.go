//go:build race

package streamhttp

const raceEnabled = true
