#!/bin/bash
# fn.sh MODE: merge each build's profiles of MODE, print ns per message of selected functions (cum)
mode=$1; cd /tmp/l7/live
for w in old new; do
  bin=/tmp/l7/mcpwire-main; [[ $w == new ]] && bin=/tmp/l7/mcpwire-l7
  req=$(cat a.$mode.$w.r*.req | paste -sd+ | bc)
  go tool pprof -proto a.$mode.$w.r*.prof > m.$mode.$w.prof 2>/dev/null
  echo "== $mode $w: $req requests"
  go tool pprof -top -cum -nodecount 400 $bin m.$mode.$w.prof 2>/dev/null | awk -v req=$req '
    /Total samples/ { t=$0; sub(/.*Total samples = /,"",t); sub(/ .*/,"",t); u=t; gsub(/[0-9.]/,"",u); v=t+0; if(u=="ms") v/=1000; printf "total %.1f ns/msg\n", v*1e9/req }
    $NF ~ /ReplyInBatch|stageFrame|linestream.\(\*Conn\).(handle|pump|Feed|inputFlush)$|Decoder..Next|indexbytebody|bytes.IndexByte|runtime.memmove|Syscall6|codec.PeekWith|engine.\(\*Call\).complete$|outQueue..put|linux.Syscall6/ {
      c=$4; u=c; gsub(/[0-9.]/,"",u); v=c+0; if(u=="ms") v/=1000; f=$1; uf=f; gsub(/[0-9.]/,"",uf); fv=f+0; if(uf=="ms") fv/=1000;
      printf "  %-70s flat %6.1f cum %6.1f ns/msg\n", $NF, fv*1e9/req, v*1e9/req }'
done
