#!/usr/bin/env python3
"""Reference folder for Chrome trace JSON, written independently of lib/traces
(whole-file json.load, Fraction arithmetic) to make the golden .folded files here.

  python3 fold_ref.py TRACE.json > TRACE.folded

Semantics (docs/exports.md, lib/traces/chrome_trace.h): roots PROCESS;THREAD
(process_name / thread_name metadata, else "pid N" / "tid N", or the id itself
when it is a string); spans = X events and B/E pairs (E closes the latest open B
of its thread); per thread sorted by (start, -end, file order); a span that
outlives its parent is split at the parent's end; weight = self time in us.
"""
import json, sys, heapq
from decimal import Decimal
from fractions import Fraction

def us(v):  # exact microseconds, rounded to whole nanoseconds like fgtool
    d = Decimal(str(v)) if not isinstance(v, str) else Decimal(v)
    ns = (d * 1000).to_integral_value(rounding="ROUND_HALF_UP")
    return int(ns)

def main(path):
    text = open(path).read().rstrip()
    try:
        data = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError:  # array format without its closing bracket
        data = json.loads(text.rstrip(",") + "]", parse_float=Decimal)
    events = data["traceEvents"] if isinstance(data, dict) else data
    def key(v):
        return ("n", v) if isinstance(v, int) else ("s", v)
    pnames, tnames, threads = {}, {}, {}
    for i, e in enumerate(events):
        ph = e.get("ph")
        pid, tid = key(e.get("pid", 0)), key(e.get("tid", 0))
        if ph == "M":
            if e.get("name") == "process_name": pnames[pid] = e["args"]["name"]
            if e.get("name") == "thread_name": tnames[(pid, tid)] = e["args"]["name"]
            continue
        if ph not in ("X", "B", "E"): continue
        t = threads.setdefault((pid, tid), {"spans": [], "marks": []})
        ts = us(e["ts"])
        if ph == "X": t["spans"].append((ts, ts + us(e["dur"]), i, e.get("name", "[unnamed]")))
        else: t["marks"].append((ts, i, ph, e.get("name")))
    out = {}
    for (pid, tid), t in threads.items():
        opened = []
        for ts, i, ph, name in sorted(t["marks"]):
            if ph == "B": opened.append((ts, i, name))
            elif opened:
                b = opened.pop(); t["spans"].append((b[0], ts, b[1], b[2]))
        plabel = pnames.get(pid) or (f"pid {pid[1]}" if pid[0] == "n" else pid[1])
        tlabel = tnames.get((pid, tid)) or (f"tid {tid[1]}" if tid[0] == "n" else tid[1])
        heap = [(s, -e, i, n) for s, e, i, n in t["spans"]]
        heapq.heapify(heap)
        stack = []  # [end, children, start, path]
        def close():
            end, children, start, path = stack.pop()
            out[path] = out.get(path, 0) + (end - start - children)
        while heap:
            s, ne, i, n = heapq.heappop(heap); e = -ne
            while stack and stack[-1][0] <= s: close()
            if stack and e > stack[-1][0]:
                heapq.heappush(heap, (stack[-1][0], -e, i, n)); e = stack[-1][0]
            if e == s: continue
            parent = stack[-1][3] if stack else (plabel, tlabel)
            if stack: stack[-1][1] += e - s
            stack.append([e, 0, s, parent + (n,)])
        while stack: close()
    lines = []
    for path, ns in out.items():
        if ns <= 0: continue
        w = Fraction(ns, 1000)
        ws = str(w.numerator) if w.denominator == 1 else repr(float(w))
        lines.append(";".join(path) + " " + ws)
    for l in sorted(lines, key=lambda s: s.rsplit(" ", 1)[0].encode()): print(l)

main(sys.argv[1])
