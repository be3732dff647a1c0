package main

import (
	"flag"
	"fmt"
	"strings"
)

// testOnlyPrefix starts the usage of a flag meant for tests only (such as
// --insecure-test-auth): it keeps working, but the help does not show it,
// so that nobody finds it there and takes it for a production option.
const testOnlyPrefix = "TESTS ONLY:"

// hidden reports whether fl is left out of the help.
func hidden(fl *flag.Flag) bool { return strings.HasPrefix(fl.Usage, testOnlyPrefix) }

// hideTestFlags makes fs's help (-h, and a bad flag) list every flag but
// the test-only ones.
func hideTestFlags(fs *flag.FlagSet) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
		printVisibleDefaults(fs)
	}
}

// printVisibleDefaults is fs.PrintDefaults without the test-only flags.
func printVisibleDefaults(fs *flag.FlagSet) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(fs.Output())
	fs.VisitAll(func(fl *flag.Flag) {
		if hidden(fl) {
			return
		}
		shown.Var(fl.Value, fl.Name, fl.Usage)
		shown.Lookup(fl.Name).DefValue = fl.DefValue // not what parsing set so far
	})
	shown.PrintDefaults()
}
