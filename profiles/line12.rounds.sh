#!/bin/bash
for r in $(seq 1 $1); do
  for m in stdio tcp unix; do
    raw=/tmp/l12/rawgnet; [[ $m == stdio ]] && raw=/tmp/l12/rawtcp
    if (( r % 2 )); then o="raw old"; else o="old raw"; fi
    for w in $o; do
      if [[ $w == raw ]]; then b=$raw; else b=/tmp/l12/mcpwire.old; fi
      echo "r$r $(/tmp/l12/four.sh $w $b $m 3s)"
    done
  done
done
