#!/bin/sh
# Reads `perf script -D` on stdin and prints "TYPE COUNT" for every record
# perf decoded (one line per record type, sorted by type).
grep -oE '^(0x[0-9a-f]+|0)@.* \[0x[0-9a-f]+\]: event: [0-9]+$' | awk '{print $NF}' | sort -n | uniq -c | awk '{print $2, $1}'
