// Package docs keeps README.md honest: its test requires every Go block of
// the README to be a snippet of snippets_test.go, where the code is
// compiled (and vetted) with the rest of the module. Edit the snippet,
// then run
//
//	go test ./internal/docs -update
//
// to copy it into the README.
package docs
