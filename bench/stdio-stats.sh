#!/bin/sh
# stdio-stats.sh FILE CMD [ARGS...]
# Runs a stdio server for the comparison harness with its stderr appended to
# FILE, so the harness can read the SIGUSR1 stats lines of a process that the
# load generator starts. exec keeps the PID: the server is the generator's child.
f=$1
shift
exec "$@" 2>>"$f"
