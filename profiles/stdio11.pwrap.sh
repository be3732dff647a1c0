#!/bin/sh
f=$1; shift
exec perf stat -x, -o "$f" -e task-clock,context-switches,syscalls:sys_enter_nanosleep,syscalls:sys_enter_futex,syscalls:sys_enter_read,syscalls:sys_enter_tgkill "$@"
