#!/bin/sh
# wrap.sh OUTFILE CMD...: run a stdio server, append its rusage to OUTFILE
f=$1; shift
exec /usr/bin/time -a -o "$f" -f "%U %S %w %c" "$@"
