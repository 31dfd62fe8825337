#!/usr/bin/env python3
"""Generates a large folded-stack file shaped like a real deep-learning profile.

Usage: gen_folded.py [--stacks N] [--names N] [--seed S] [--shuffle] [--perturb] OUT

Defaults give ~175 MB: 200,000 unique stacks, 5 to 60 frames deep, drawn from
20,000 distinct C++-style names (at::native::fn_12<float>, ...). Stacks share
prefixes the way real call trees do (each new stack continues a random earlier
stack for a while, then branches), so the merged tree is much smaller than the
input. Output is sorted like stackcollapse output unless --shuffle.
--perturb changes the weights (and drops/adds a few stacks) deterministically
from the same seed, for `fgtool diff` benchmarks.
"""
import argparse
import random
import sys

NAMESPACES = ["at::native", "at::native::cpu", "torch::autograd", "c10::impl", "at::_ops", "std",
              "torch::jit", "mkl::blas", "caffe2", "pybind11::detail", "dnnl::impl::cpu::x64"]
TEMPLATE_ARGS = ["<float>", "<double>", "<c10::Half>", "<long>", "<int>", "", "", "", ""]
STEMS = ["fn", "kernel", "launch", "dispatch", "apply", "call", "evaluate_function", "run", "impl",
         "gemm", "conv2d_forward", "softmax_backward", "loop", "reduce", "copy_"]


def make_names(n, rng):
    names = []
    for i in range(n):
        r = rng.random()
        if r < 0.08:
            names.append("[unknown]" if i % 10 == 0 else "__x64_sys_call_%d_[k]" % i)
        elif r < 0.15:
            names.append("_PyEval_EvalFrameDefault_%d" % i)
        else:
            names.append("%s::%s_%d%s" % (rng.choice(NAMESPACES), rng.choice(STEMS), i, rng.choice(TEMPLATE_ARGS)))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--stacks", type=int, default=200000)
    ap.add_argument("--names", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--perturb", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    names = make_names(a.names, rng)
    roots = ["python3", "train", "dataloader_worker"]
    stacks = []
    seen = set()
    while len(stacks) < a.stacks:
        depth = rng.randint(5, 60)
        if stacks and rng.random() < 0.97:
            base = stacks[rng.randrange(len(stacks))]
            # Keep a long shared prefix, like real call trees.
            keep = max(1, min(len(base), depth - 1, int(len(base) * (1 - rng.random() ** 3))))
            frames = base[:keep]
        else:
            frames = [rng.choice(roots)]
        while len(frames) < depth:
            frames.append(names[int(rng.paretovariate(0.6)) % len(names)] if rng.random() < 0.3
                          else names[rng.randrange(len(names))])
        key = ";".join(frames)
        if key in seen:
            continue
        seen.add(key)
        stacks.append(frames)
    seen = None
    wrng = random.Random(a.seed + 1000)
    lines = []
    for frames in stacks:
        w = int(wrng.paretovariate(1.2))
        if a.perturb:
            r = wrng.random()
            if r < 0.02:
                continue  # gone in B
            w = max(1, int(w * (0.5 + r)))
        lines.append(";".join(frames) + " " + str(w) + "\n")
    if a.perturb:
        for i in range(a.stacks // 50):  # new in B
            lines.append(";".join(stacks[i][:3]) + ";new_function_%d 7\n" % i)
    if a.shuffle:
        wrng.shuffle(lines)
    else:
        lines.sort()
    with open(a.out, "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    sys.exit(main())
