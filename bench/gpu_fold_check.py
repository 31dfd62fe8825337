#!/usr/bin/env python3
"""Checks `fgtool fold --gpu` on real PyTorch/Kineto traces against an independent oracle.

Usage: gpu_fold_check.py FGTOOL [TRACE_DIR]   (default TRACE_DIR: ../shared/traces next to the repo)

For every *.json / *.json.gz in TRACE_DIR that has GPU activity, asserts:
  - per kernel name, the summed leaf weight of `fold --gpu --full-kernel-names` equals the summed
    `dur` of that kernel's events, as TRACE_DIR/kernel_totals.py --json computes it, within 0.1%;
  - the shortened-name fold (`fold --gpu`) has the same total;
  - when the trace has launch correlations, at least 99% of GPU time sits under a CPU stack
    (not under "[gpu] unattributed").
Exits 0 when all pass, 1 on a failure, 77 (skip) when TRACE_DIR or kernel_totals.py is absent.
"""
import json, os, subprocess, sys


def clamp(name):
    # fgtool keeps frame names to 4096 bytes (at a UTF-8 boundary) and makes ';' and line breaks safe.
    name = name.strip(" \t").replace(";", ":").replace("\n", " ").replace("\r", " ")
    b = ("[gpu] " + name).encode("utf-8", "replace")
    if len(b) > 4096:
        b = b[:4096]
        while b and (b[-1] & 0xC0) == 0x80:
            b = b[:-1]
        # drop a lead byte left without its continuation bytes
        if b and b[-1] >= 0xC0:
            b = b[:-1]
    return b.decode("utf-8", "replace")


def leaves(fgtool, trace, *flags):
    out = subprocess.run([fgtool, "fold", "--gpu", *flags, trace], check=True, capture_output=True).stdout
    per, unattributed, total = {}, 0.0, 0.0
    for line in out.decode("utf-8", "replace").splitlines():
        stack, _, w = line.rpartition(" ")
        frames = stack.split(";")
        w = float(w)
        total += w
        if frames[0] == "[gpu] unattributed":
            unattributed += w
        per[frames[-1]] = per.get(frames[-1], 0.0) + w
    return per, unattributed, total


def main(argv):
    fgtool = argv[0]
    here = os.path.dirname(os.path.abspath(__file__))
    tdir = argv[1] if len(argv) > 1 else os.path.join(here, "..", "..", "shared", "traces")
    oracle = os.path.join(tdir, "kernel_totals.py")
    if not os.path.isdir(tdir) or not os.path.exists(oracle):
        print("SKIP: no trace directory with kernel_totals.py at %s" % tdir)
        return 77
    failed = False
    for name in sorted(os.listdir(tdir)):
        if not (name.endswith(".json") or name.endswith(".json.gz")):
            continue
        trace = os.path.join(tdir, name)
        ref = json.loads(subprocess.run([sys.executable, oracle, trace, "--json"], check=True,
                                        capture_output=True).stdout)
        if ref["gpu_us"] == 0:
            print("%-34s no GPU activity (skipped)" % name)
            continue
        want = {}
        for k, v in ref["kernels"].items():
            want[clamp(k)] = want.get(clamp(k), 0.0) + v
        got, unattributed, total = leaves(fgtool, trace, "--full-kernel-names")
        got = {k: v for k, v in got.items() if k != "[gpu idle]"}
        bad = [k for k in set(want) | set(got)
               if abs(got.get(k, 0.0) - want.get(k, 0.0)) > 1e-3 * max(want.get(k, 0.0), 1e-9)]
        _, _, short_total = leaves(fgtool, trace)
        attributed = 100.0 * (total - unattributed) / total if total else 0.0
        with_launch = 100.0 * ref["with_launch_us"] / ref["gpu_us"]
        ok = not bad and abs(short_total - ref["gpu_us"]) <= 1e-3 * ref["gpu_us"]
        if with_launch > 0 and attributed < 99.0:
            ok = False
        print("%-34s %4d kernels  GPU %.1f us (oracle %.1f)  attributed %.2f%% (oracle: %.2f%% with a launch)  %s"
              % (name, len(want), total, ref["gpu_us"], attributed, with_launch, "ok" if ok else "FAIL"))
        for k in sorted(bad)[:5]:
            print("    %s: fold %.3f, oracle %.3f" % (k[:120], got.get(k, 0.0), want.get(k, 0.0)))
        failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
