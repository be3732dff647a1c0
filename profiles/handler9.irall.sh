#!/bin/bash
# irall.sh DIR: instruction counts of the four benchmarks of the brief
d=$1; IR=$(cd "$(dirname "$0")" && pwd)/round8.ir.sh; N=${2:-32000}
cd $d
$IR ./ls.test 'BenchmarkStreamEcho/Inline/progressToken$' 6400 $N
$IR ./ls.test 'BenchmarkStreamEcho/Inline/typed$' 6400 $N
$IR ./eng.test 'BenchmarkTypedEchoPrepared/serial$' 5000 $((N*25/32))
$IR ./ref.test 'BenchmarkEcho$' 5000 $((N*25/32))
