//go:build !unix

package main

import "context"

// Windows has no SIGUSR1 and no SIGHUP (Ctrl-C, Ctrl-Break and closing the
// console still stop serve, through os.Interrupt and syscall.SIGTERM): the
// stats line is not offered, and a certificate is reloaded only when its
// files change.

// tlsReloadHelp says when --tls-cert is reloaded, for the help texts.
const tlsReloadHelp = "reloaded when the files change (no SIGHUP on this system)"

// dumpStatsOnSignal does nothing here: there is no SIGUSR1.
func dumpStatsOnSignal(context.Context) {}

// onHangup does nothing here: there is no SIGHUP.
func onHangup(context.Context, func()) {}
