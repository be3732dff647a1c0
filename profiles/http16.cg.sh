#!/bin/bash
# http16.cg.sh BIN TAG [ROW]: callgrind of BenchmarkWrkEcho's ROW (mcpwire, or rawfast) at 20,000 and
# 60,000 requests, into /tmp/h16cg{TAG}.{mcp|raw}.{N}, for http16.cgdiff.py. RDTSCP off as in round8.ir.sh.
export GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 GOMAXPROCS=1 GOGC=off
row=${3:-mcpwire} short=mcp
[ "$row" = rawfast ] && short=raw
for n in 20000 60000; do
  nice -n 10 valgrind --tool=callgrind --callgrind-out-file=/tmp/h16cg$2.$short.$n "$1" -test.run XXX \
    -test.bench "BenchmarkWrkEcho\$/$row\$" -test.benchtime ${n}x >/dev/null 2>&1
done
