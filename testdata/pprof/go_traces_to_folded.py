#!/usr/bin/env python3
"""`go tool pprof -traces` text -> folded stacks: the independent reference
for fgtool's reading of Go's own profiles (testdata/pprof/README.md).

Each trace block gives its labels, then the value on the leaf's line and
the callers below it, leaf first; '(inline)' marks an inlined frame, which
is a frame of its own. Values are converted to nanoseconds.
"""
import collections
import re
import sys

UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
SEPARATOR = "-----------+-------------------------------------------------------"


def fold(text):
    stacks = collections.Counter()
    for block in text.split(SEPARATOR)[1:]:
        value, frames = None, []
        for line in block.split("\n"):
            if not line.strip():
                continue
            if value is None:
                m = re.match(r"\s+([0-9.]+)(ns|us|ms|s)\s+(.*)$", line)
                if m:  # lines before the value are labels ("key: value")
                    value = float(m.group(1)) * UNITS[m.group(2)]
                    frames.append(m.group(3))
                continue
            frames.append(line.strip())
        if value is None:
            continue
        frames = [re.sub(r" \(inline\)$", "", f) for f in frames]
        stacks[";".join(reversed(frames))] += value
    return stacks


if __name__ == "__main__":
    for stack, value in sorted(fold(sys.stdin.read()).items()):
        print("%s %d" % (stack, round(value)))
