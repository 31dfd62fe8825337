#!/bin/sh
# Re-records the perf.data fixtures of tests/perf (see README.md). Run from
# this folder as root (or with perf_event_paranoid <= 1). perf 6.1 was used.
set -eu
cd "$(dirname "$0")"
g++ -O2 -g -fno-omit-frame-pointer -o prog prog.cpp
N=150000000
perf record -q -o fp.data -e cpu-clock -F 499 -g ./prog $N
perf record -q -o - -e cpu-clock -F 499 -g ./prog $N > pipe.data
perf record -q -z -o zstd.data -e cpu-clock -F 499 -g ./prog $N
perf record -q -o two_clocks.data -e cpu-clock -e task-clock -F 499 -g ./prog $N
perf record -q -o sched.data -e sched:sched_switch -e cpu-clock -F 499 -g ./prog $N sleep
perf record -q -o - -e sched:sched_switch -e cpu-clock -F 499 -g ./prog $N sleep > sched_pipe.data
perf record -q -o switch.data --switch-events -e cpu-clock -F 499 -g ./prog $N sleep
perf record -q -o dwarf.data -e cpu-clock -F 99 --call-graph dwarf,4096 ./prog $N
perf record -q -o buildid_mmap.data --buildid-mmap -e cpu-clock -F 499 -g ./prog $N
perf record -q -o exec.data -e cpu-clock -F 499 -g -- sh -c "./prog $N; true"
rm -f *.data.old
# Golden outputs of perf's own decoder (used by the tests):
#   NAME.counts  records per type ("TYPE COUNT") from perf script -D
#   NAME.events  samples per event ("EVENT COUNT") from perf script -F event
#   sched.trace  the sched_switch fields as perf script -F trace prints them
for f in *.data; do
  perf script -D -i "$f" 2>/dev/null | ./count_records.sh > "${f%.data}.counts"
  perf script -G -i "$f" -F event 2>/dev/null | sed 's/^ *//; s/: *$//' | sort | uniq -c | awk '{print $2, $1}' > "${f%.data}.events"
done
perf script -i sched.data -F event,trace 2>/dev/null | grep 'sched:sched_switch:' | sed 's/^ *sched:sched_switch: *//' > sched.trace
