// Package docs keeps README.md and the pages under docs/ honest: its test
// requires every Go block of them to be a snippet of snippets_test.go,
// where the code is compiled (and vetted) with the rest of the module.
// Edit the snippet, then run
//
//	go test ./internal/docs -update
//
// to copy it into the page.
package docs
