#!/usr/bin/env python3
"""Reference folder for oneDNN verbose logs, independent of lib/traces: takes
every "exec" line of the primitive component, primitive and implementation as
the two fields after the engine, problem and time as the last two fields.

  python3 onednn_ref.py LOG > LOG.folded      (weights: microseconds)
"""
import sys
from decimal import Decimal
from fractions import Fraction
out = {}
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if not f[0].endswith("_verbose") or "exec" not in f[1:5]: continue
    i = f.index("exec")
    if any(x in ("graph",) for x in f[1:i]): continue
    e = i + 1 + (f[i + 1] in ("cpu", "gpu"))
    if len(f) < e + 6: continue
    key = (f[e] or "[none]", f[e + 1] or "[none]", f[-2] or "[none]")
    ns = int((Decimal(f[-1]) * 1000000).to_integral_value(rounding="ROUND_HALF_UP"))
    out[key] = out.get(key, 0) + ns
lines = []
for k, ns in out.items():
    w = Fraction(ns, 1000)
    lines.append(";".join(k) + " " + (str(w.numerator) if w.denominator == 1 else repr(float(w))))
for l in sorted(lines, key=lambda s: s.rsplit(" ", 1)[0].encode()): print(l)
