#!/usr/bin/env python3
"""Writes a large Kineto-shaped trace (PyTorch profiler layout) for reader benchmarks.

Usage: gen_kineto_trace.py OUT.json [--mb 300] [--seed-trace T.json[.gz]]

Without --seed-trace: synthetic training steps (ProfilerStep#N > aten ops >
cudaLaunchKernel, kernels on two streams with correlation ids and ac2g flows,
args like the real profiler writes). With --seed-trace: that trace's events
repeated, shifted in time and with fresh correlation/flow ids, until OUT
reaches the size (e.g. a real trace from ../shared/traces).
"""
import gzip, json, random, sys


def seed_events(path):
    op = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with op(path, "rt", encoding="utf-8") as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    return [e for e in ev if e.get("ph") == "M"], [e for e in ev if e.get("ph") != "M"]


def synthetic_step():
    rnd = random.Random(1)
    ops = ["aten::linear", "aten::relu", "aten::conv2d", "aten::add_", "aten::mm", "aten::sum"]
    kernels = ["void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
               "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
               "ampere_sgemm_128x64_tn", "void cudnn::cnn::conv2d_grouped_direct_kernel<float, float>(int)",
               "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
               "float> > >(at::native::ReduceOp<float, at::native::MeanOps<float, float> >)"]
    ev, t, corr = [], 0, 1
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "tid": 100,
               "ts": 0, "dur": 4000, "args": {"External id": 1, "Record function id": 0, "Ev Idx": 0}})
    t = 10
    for i in range(120):
        name = ops[i % len(ops)]
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100, "ts": t, "dur": 30,
                   "args": {"External id": i + 2, "Record function id": 0, "Sequence number": i,
                            "Fwd thread id": 0, "Ev Idx": i + 1}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
                   "ts": t + 10, "dur": 8, "args": {"External id": i + 2, "cbid": 211, "correlation": corr}})
        ev.append({"ph": "s", "id": corr, "pid": 100, "tid": 100, "ts": t + 10, "cat": "ac2g", "name": "ac2g"})
        stream = 7 if i % 3 else 20
        ev.append({"ph": "X", "cat": "kernel", "name": kernels[rnd.randrange(len(kernels))], "pid": 0,
                   "tid": stream, "ts": t + 25, "dur": 12,
                   "args": {"External id": i + 2, "queued": 0, "device": 0, "context": 1, "stream": stream,
                            "correlation": corr, "registers per thread": 32, "shared memory": 0,
                            "blocks per SM": 0.5, "warps per SM": 2.0, "grid": [80, 1, 1], "block": [128, 1, 1],
                            "est. achieved occupancy %": 3}})
        ev.append({"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": t + 25, "cat": "ac2g", "name": "ac2g",
                   "bp": "e"})
        corr += 1
        t += 32
    meta = [{"name": "process_name", "ph": "M", "ts": 0, "pid": 100, "tid": 0, "args": {"name": "python3"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": 100, "tid": 100, "args": {"name": "thread 100 (python3)"}},
            {"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": 20, "args": {"name": "stream 20 "}}]
    return meta, ev


def main(argv):
    out, mb, seed = argv[0], 300.0, None
    if "--mb" in argv:
        mb = float(argv[argv.index("--mb") + 1])
    if "--seed-trace" in argv:
        seed = argv[argv.index("--seed-trace") + 1]
    meta, rest = seed_events(seed) if seed else synthetic_step()
    stamped = [e for e in rest if "ts" in e]
    t0 = min(e["ts"] for e in stamped)
    period = max(e["ts"] + e.get("dur", 0) for e in stamped) - t0 + 1000
    with open(out, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n'
                '  "traceEvents": [\n')
        f.write(",\n".join(json.dumps(e) for e in meta))
        size, rep = 0, 0
        while size < mb * 1e6:
            parts = []
            for e in rest:
                e2 = dict(e)
                if "ts" in e2:
                    e2["ts"] = e["ts"] + rep * period
                a = e2.get("args")
                if isinstance(a, dict) and "correlation" in a:
                    e2["args"] = dict(a, correlation=a["correlation"] + rep * 10000000)
                if e2.get("ph") in ("s", "f") and isinstance(e2.get("id"), int):
                    e2["id"] = e2["id"] + rep * 10000000
                parts.append(json.dumps(e2))
            chunk = ",\n" + ",\n".join(parts)
            f.write(chunk)
            size += len(chunk)
            rep += 1
        f.write('\n  ],\n  "traceName": "synthetic.pt.trace.json"\n}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
