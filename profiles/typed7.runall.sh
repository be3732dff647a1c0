#!/bin/bash
# runall.sh TAG ROUNDS: the three A/Bs of the brief, old (main) against new (the branch), alternating
tag=$1 r=${2:-10}
echo "# start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" > $tag.load.txt
./ab.sh ./engine.old.test ./engine.new.test $r $tag.engine 'TypedEchoPrepared/serial' 300ms
./ab.sh ./codec.old.test ./codec.new.test $r $tag.codec 'PeekFixture|PeekToolsCall|SonicGet3Fields|AppendTextResult$' 300ms
./ab.sh ./streamhttp.old.test ./streamhttp.new.test $r $tag.wrkecho 'WrkEcho$' 1s
echo "# end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $tag.load.txt
