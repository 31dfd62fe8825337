#!/usr/bin/env python3
"""Writes the demo's out/index.html from what scripts/demo.sh left in out/.

Every number on the page is read from a file next to it: category shares
from `fgtool report --format json` (the same self shares the SVG legends
show), the thread-count change from `fgtool diff --by category --format
json`, on/off-CPU time from the wall fold, throughput from the trainers'
logs. Colours are the report's category colours, so a swatch on the page is
the colour of those boxes in the graph.

    python3 scripts/demo_index.py OUT_DIR THREADS
"""
import html
import json
import os
import re
import sys


def esc(s):
    return html.escape(str(s), True)


def pct(x, digits=1):
    """A share (0..1) as the SVG legend prints it: one decimal, '<0.1%' for tiny non-zero shares."""
    v = 100.0 * x
    if 0 < v < 0.05:
        return "<0.1%"
    return "%.*f%%" % (digits, v)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def top_categories(report, kind="resource", n=4):
    """The n largest categories of one kind by self share, 'other' last-ranked like any other row."""
    rows = [c for c in report.get(kind, []) if c.get("self_share", 0) > 0]
    rows.sort(key=lambda c: -c["self_share"])
    return rows[:n]


def top_function(cat):
    top = cat.get("top") or []
    return top[0]["function"] if top else None


def read_log(path):
    """Throughput and duration a trainer printed: {'samples_per_s': float, 'seconds': float, 'threads': int}."""
    info = {}
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return info
    m = re.search(r"samples/s (\d+(?:\.\d+)?)", text)
    if m:
        info["samples_per_s"] = float(m.group(1))
    m = re.search(r"^done: (\d+(?:\.\d+)?)s", text, re.M)
    if m:
        info["seconds"] = float(m.group(1))
    m = re.search(r"; (\d+) threads on ", text)
    if m:
        info["threads"] = int(m.group(1))
    return info


def folded_stacks(folded_path):
    """(stack, weight) for each line of a fold, skipping blank, '#' and
    malformed lines; None if the file cannot be opened."""
    try:
        f = open(folded_path, errors="replace")
    except OSError:
        return None
    return _stacks_of(f)


def _stacks_of(f):
    with f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            stack, _, count = line.rpartition(" ")
            try:
                w = float(count)
            except ValueError:
                continue
            yield stack, w


OFFCPU_FRAME = re.compile(r"\[off-cpu: ([^\]]*)\]")


def wall_split(folded_path):
    """On-CPU and off-CPU weight of a --wall fold, and the off-CPU weight per state."""
    stacks = folded_stacks(folded_path)
    if stacks is None:
        return None
    on = off = 0
    states = {}
    for stack, w in stacks:
        m = OFFCPU_FRAME.search(stack)
        if m:
            off += w
            state = m.group(1).rstrip("+")  # perf writes a preempted task as R+
            states[state] = states.get(state, 0) + w
        else:
            on += w
    if on + off == 0:
        return None
    return {"on": on, "off": off, "states": states}


UNKNOWN_FRAME = re.compile(r"^(\[unknown\]|0x[0-9a-f]+)$")
# Where a complete user-space stack starts: the program's main or a thread's start routine.
ROOT_FRAMES = {"main", "__libc_start_main", "__libc_start_call_main", "_start", "start_thread", "clone", "clone3"}


def stack_damage(folded_path, min_run=8):
    """How broken a fold's stacks are: shares of the weight whose stack reaches
    main or a thread start ('rooted'), has at most 3 frames ('shallow'), or
    holds a run of >= min_run unresolved frames ('garbage'), and the longest
    such run.

    Frame-pointer unwinding through code built without frame pointers stops
    at the first such library (shallow, unrooted stacks) or reads random stack
    words as return addresses (runs of [unknown] frames)."""
    stacks = folded_stacks(folded_path)
    if stacks is None:
        return None
    total = rooted = shallow = garbage = 0
    longest = 0
    for stack, w in stacks:
        frames = stack.split(";")
        total += w
        run = best = 0
        for fr in frames:
            run = run + 1 if UNKNOWN_FRAME.match(fr) else 0
            best = max(best, run)
        longest = max(longest, best)
        if best >= min_run:
            garbage += w
        if ROOT_FRAMES.intersection(frames):
            rooted += w
        if len(frames) <= 3:
            shallow += w
    if total == 0:
        return None
    return {"rooted": rooted / total, "shallow": shallow / total, "garbage": garbage / total, "longest": longest}


# What a category name means, for a reader who has not seen the rules file
# (lib/categories/default_rules.json). Both spellings of renamed categories.
GLOSSARY = {
    "omp": "OpenMP runtime (libgomp): worker threads running, spinning or waiting at barriers",
    "blas-threads": "OpenBLAS's own worker threads (set by OPENBLAS_NUM_THREADS)",
    "gemm": "matrix multiplication (OpenBLAS sgemm kernels)",
    "conv": "convolution kernels",
    "eltwise": "element-wise tensor kernels (add, mul, activations)",
    "framework": "libtorch's dispatcher, autograd and tensor bookkeeping",
    "loader": "the dynamic linker resolving libtorch's symbols at program start",
    "dynamic-linker": "the dynamic linker resolving libtorch's symbols at program start",
    "page-fault": "the kernel mapping in fresh memory pages",
    "alloc": "memory allocation (malloc/free)",
    "sync": "locks and futexes",
    "syscall-io": "system calls for I/O",
    "kernel": "other Linux kernel code",
    "other": "frames no rule matched",
}

# sched_switch's previous-task state of an [off-cpu: STATE] frame.
STATES = {"R": "runnable but preempted (R)", "S": "sleeping (S)", "D": "uninterruptible, e.g. disk (D)",
          "I": "idle (I)", "T": "stopped (T)"}


def state_name(s):
    return STATES.get(s, s)


def offcpu_howto(wall):
    """How to read the off-CPU graph, with what this recording's states say about it."""
    text = ("Only blocked time: each tower is a place where threads were off the CPU (OpenMP barriers, futexes, "
            "condition variables, I/O, or preempted), width in time, all boxes blue.")
    off = wall["off"]
    r = wall["states"].get("R", 0)
    if off and r / off > 0.5:
        text += (" Here most of it (%s) is state R: threads that were ready to run while another process held the CPU "
                 "(the machine was busy), so these towers show where threads were preempted rather than where they chose "
                 "to wait." % pct(r / off))
    elif off:
        text += " Towers ending in <code>futex_wait</code> under libgomp are OpenMP workers waiting for work."
    return text


def swatches(cats):
    """'gemm 12.3%' chips, coloured as in the graph."""
    out = []
    for c in cats:
        color = c.get("color") or "#ccc"
        out.append("<span class='cat'><span class='sw' style='background:%s'></span>%s <b>%s</b></span>"
                   % (esc(color), esc(c["name"]), esc(pct(c["self_share"]))))
    return " ".join(out)


def card(out, svg, title, headline_html, howto, links):
    """One graph: a thumbnail (the SVG itself scaled down; its script does not run in an <img>), its numbers, how to read it."""
    if not os.path.exists(os.path.join(out, svg)):
        return ""
    extra = " · ".join("<a href='%s'>%s</a>" % (esc(h), esc(t)) for h, t in links if os.path.exists(os.path.join(out, h)))
    return ("<div class='card'><a class='thumb' href='%s'><img src='%s' alt='%s' loading='lazy'></a>"
            "<div class='body'><h3><a href='%s'>%s</a></h3><div class='head'>%s</div><p class='how'>%s</p>"
            "<p class='files'>%s</p></div></div>\n"
            % (esc(svg), esc(svg), esc(title), esc(svg), esc(title), headline_html, howto, extra))


def category_sentence(report):
    cats = top_categories(report, n=3)
    parts = []
    for c in cats:
        fn = top_function(c)
        parts.append("%s %s%s" % (c["name"], pct(c["self_share"]), " (mostly <code>%s</code>)" % esc(short(fn)) if fn else ""))
    return ", ".join(parts)


def short(name, n=48):
    return name if len(name) <= n else name[: n - 2] + ".."


def diff_rows(diff, kind="resource", n=5):
    rows = [r for r in diff.get(kind, []) if r.get("a_share", 0) > 0 or r.get("b_share", 0) > 0]
    rows.sort(key=lambda r: -abs(r.get("change_points", 0)))
    return rows[:n]


def build(out, threads):
    rep = {n: load_json(os.path.join(out, n + ".report.json"))
           for n in ("mlp-dwarf", "mlp-wall", "vae-1thread", "vae-%sthreads" % threads)}
    diff = load_json(os.path.join(out, "diff-vae-threads.categories.json"))
    colors = {}
    for r in rep.values():
        for c in (r or {}).get("resource", []) + (r or {}).get("phase", []):
            colors.setdefault(c["name"], c.get("color"))
    vae1_log = read_log(os.path.join(out, "vae-1thread.log"))
    vaen_log = read_log(os.path.join(out, "vae-%sthreads.log" % threads))
    mlp_log = read_log(os.path.join(out, "mlp-dwarf.log"))
    wall = wall_split(os.path.join(out, "mlp-wall.folded"))
    fp = stack_damage(os.path.join(out, "mlp-fp.folded"))
    dwarf = stack_damage(os.path.join(out, "mlp-dwarf.folded"))
    vaen = "vae-%sthreads" % threads

    p = []
    p.append("<!DOCTYPE html><html><head><meta charset='utf-8'><meta name='generator' content='scripts/demo_index.py'><title>fgtool demo: libtorch MLP and VAE training</title>"
             "<style>body{font-family:sans-serif;max-width:72em;margin:1.5em auto;padding:0 1em;color:#212529;line-height:1.4}"
             "h2{border-bottom:1px solid #ced4da;padding-bottom:.2em;margin-top:1.6em}"
             ".card{display:flex;gap:1em;margin:1em 0;padding:.6em;border:1px solid #dee2e6;border-radius:6px}"
             ".thumb img{width:300px;height:180px;object-fit:contain;border:1px solid #ced4da;background:#fff}"
             ".body{flex:1}.body h3{margin:.1em 0 .4em}.how{color:#495057;font-size:.92em}.files{font-size:.88em}"
             ".gl{white-space:nowrap}.cat{white-space:nowrap;margin-right:.8em}.sw{display:inline-block;width:.9em;height:.9em;border:1px solid #495057;margin-right:.3em;vertical-align:-.1em}"
             ".summary{background:#f1f3f5;padding:.6em 1em;border-radius:6px}.summary li{margin:.3em 0}"
             "table{border-collapse:collapse;font-size:.92em}td,th{padding:.15em .6em;text-align:right}td:first-child,th:first-child{text-align:left}"
             ".grew{color:#c92a2a}.shrank{color:#1864ab}.note{border-left:4px solid #f59f00;padding:.4em 1em;background:#fff9db}"
             "</style></head><body>")
    p.append("<h1>fgtool demo: where libtorch MLP and VAE training spend their time</h1>")
    p.append("<p>Real training runs of the bundled trainers on synthetic MNIST-shaped data, recorded with "
             "<code>fgtool record</code> (perf), folded natively, categorised and rendered by fgtool on this machine "
             "(%s hardware threads). Shares below are each category's <em>self</em> share of the samples, as in "
             "<code>fgtool report</code> and in each graph's legend; a swatch has the colour of that category's boxes.</p>"
             % esc(threads))

    # The three questions, answered in one place.
    p.append("<div class='summary'><b>In short</b><ul>")
    if rep["mlp-dwarf"]:
        p.append("<li><b>MLP</b> on-CPU: %s.</li>" % category_sentence(rep["mlp-dwarf"]))
    if rep["vae-1thread"]:
        p.append("<li><b>VAE, 1 thread</b>: %s.</li>" % category_sentence(rep["vae-1thread"]))
    if rep[vaen]:
        p.append("<li><b>VAE, %s threads</b>: %s.</li>" % (esc(threads), category_sentence(rep[vaen])))
    if diff:
        rows = diff_rows(diff, n=3)
        ch = ", ".join("%s %s &rarr; %s (<span class='%s'>%+.1f pp</span>)"
                       % (esc(r["name"]), pct(r["a_share"]), pct(r["b_share"]), "grew" if r["change_points"] > 0 else "shrank",
                          r["change_points"]) for r in rows)
        speed = ""
        if vae1_log.get("samples_per_s") and vaen_log.get("samples_per_s"):
            a, b = vae1_log["samples_per_s"], vaen_log["samples_per_s"]
            speed = (" Training throughput went from %.0f to %.0f samples/s: <b>%.1fx %s</b>."
                     % (a, b, max(a, b) / min(a, b), "faster" if b > a else "slower"))
        ratio = ""
        ta, tb = diff.get("a", {}).get("total"), diff.get("b", {}).get("total")
        if ta and tb and diff["a"].get("units") == diff["b"].get("units"):
            ratio = " The %s-thread run took %.1fx the sampled CPU time of the 1-thread run for the same batches." % (esc(threads), tb / ta)
        p.append("<li><b>1 &rarr; %s threads</b> (VAE): biggest changes of share: %s.%s%s</li>" % (esc(threads), ch, ratio, speed))
    omp_mlp = next((c["self_share"] for c in (rep["mlp-dwarf"] or {}).get("resource", []) if c["name"] == "omp"), 0)
    omp_n = next((c["self_share"] for c in (rep[vaen] or {}).get("resource", []) if c["name"] == "omp"), 0)
    if omp_n > 0.5 and vae1_log.get("samples_per_s", 0) > vaen_log.get("samples_per_s", float("inf")):
        p.append("<li><b>What it means</b>: with %s threads most CPU time is OpenMP threads spinning and waiting at "
                 "barriers, not math, and the VAE trained %.1fx faster on 1 thread. For models this small (and on a busy "
                 "machine), set <code>OMP_NUM_THREADS=1</code> or <code>torch::set_num_threads(1)</code>.%s</li>"
                 % (esc(threads), vae1_log["samples_per_s"] / vaen_log["samples_per_s"],
                    " The MLP, recorded with %s threads, shows the same pattern (omp %s)." % (esc(threads), pct(omp_mlp))
                    if omp_mlp > 0.5 else ""))
    if wall:
        p.append("<li><b>MLP wall clock</b>: %s of thread time on the CPU, %s blocked (off-CPU).</li>"
                 % (pct(wall["on"] / (wall["on"] + wall["off"])), pct(wall["off"] / (wall["on"] + wall["off"]))))
    p.append("</ul>")
    names = []
    for r in rep.values():
        for c in top_categories(r or {}, n=5):
            if c["name"] not in names and c["name"] in GLOSSARY:
                names.append(c["name"])
    if names:
        p.append("<p><small><b>Categories:</b> %s. A name in brackets such as <code>[libgomp.so.1.0.0]</code> is code "
                 "in that library for which no symbols were found.</small></p>"
                 % "; ".join("%s%s</span>: %s" % ("<span class='gl'><span class='sw' style='background:%s'></span>" % esc(colors.get(n) or "#ccc"),
                                                     esc(n), esc(GLOSSARY[n])) for n in names))
    p.append("</div>")

    how_cat = ("Each box is a function, its callers below it; width is its share of the samples (x is not time: boxes are "
               "sorted by name). A box's colour is its category; the legend's percentages are the width drawn in each colour "
               "and equal the report's RESOURCE self shares. Click a box to zoom, click a legend row or search "
               "<code>cat:gemm</code> to highlight a category.")

    def cat_card(name, svg, title, log):
        r = rep.get(name)
        if not r:
            return ""
        head = swatches(top_categories(r, n=5))
        if log.get("samples_per_s"):
            head += "<br><small>training throughput while recorded: %.0f samples/s, %s s</small>" % (
                log["samples_per_s"], "%.1f" % log["seconds"] if "seconds" in log else "?")
        return card(out, svg, title, head, how_cat,
                    [(name + ".report.txt", "report"), (name + ".report.json", "JSON"), (name + ".folded", "folded stacks")])

    p.append("<h2>On-CPU: where the CPU time goes</h2>")
    p.append(cat_card("mlp-dwarf", "mlp-dwarf.svg", "MLP training, on-CPU (DWARF stacks)", mlp_log))
    p.append(cat_card("vae-1thread", "vae-1thread.svg", "VAE training, 1 thread", vae1_log))
    p.append(cat_card(vaen, vaen + ".svg", "VAE training, %s threads" % threads, vaen_log))

    p.append("<h2>Off-CPU and wall clock: where threads wait</h2>")
    if wall:
        tot = wall["on"] + wall["off"]
        states = sorted(wall["states"].items(), key=lambda kv: -kv[1])[:3]
        head = ("on-CPU <b>%s</b>, off-CPU <b>%s</b>" % (pct(wall["on"] / tot), pct(wall["off"] / tot)) +
                ("; of which " + ", ".join("%s %s" % (esc(state_name(s)), pct(w / tot)) for s, w in states) if states else "") +
                " <small>(of all thread time, from mlp-wall.folded)</small>")
        p.append(card(out, "mlp-wall.svg", "MLP training, wall clock (on- and off-CPU)", head,
                      "Width is time (on-CPU samples plus blocked time from scheduler switches), per thread summed. Warm "
                      "boxes ran on the CPU, blue boxes only waited, blends did both in proportion (the tooltip gives the split); "
                      "<code>[off-cpu: S]</code> tops are the blocked time and the thread's state: R runnable but preempted (waiting "
                      "for a CPU another process held), S sleeping (waiting for an event), D uninterruptible.",
                      [("mlp-wall.report.txt", "report"), ("mlp-wall.folded", "folded stacks")]))
        off = wall["off"]
        head = ("%s of thread time blocked" % pct(off / tot) +
                ("; of the blocked time: " + ", ".join("%s %s" % (esc(state_name(s)), pct(w / off)) for s, w in states) if states and off else ""))
        p.append(card(out, "mlp-offcpu.svg", "MLP training, off-CPU only", head,
                      offcpu_howto(wall),
                      [("mlp-wall-offcpu.folded", "folded stacks")]))

    p.append("<h2>Differential: what changed between 1 and %s threads (VAE)</h2>" % esc(threads))
    if diff:
        rows = diff_rows(diff, n=8)
        t = ["<table><tr><th>resource</th><th>1 thread</th><th>%s threads</th><th>change</th></tr>" % esc(threads)]
        for r in rows:
            # No category swatch: on a differential graph colour means change (the
            # graph's legend draws empty boxes for the same reason).
            t.append("<tr><td>%s</td><td>%s</td><td>%s</td><td class='%s'>%+.1f pp</td></tr>"
                     % (esc(r["name"]), pct(r["a_share"]), pct(r["b_share"]),
                        "grew" if r["change_points"] > 0 else "shrank", r["change_points"]))
        t.append("</table>")
        head = "".join(t)
        if vae1_log.get("samples_per_s") and vaen_log.get("samples_per_s"):
            head += ("<small>Throughput: %.0f samples/s on 1 thread, %.0f on %s threads.</small>"
                     % (vae1_log["samples_per_s"], vaen_log["samples_per_s"], esc(threads)))
        p.append(card(out, "diff-vae-threads.svg", "VAE: 1 thread (A) vs %s threads (B)" % threads, head,
                      "Shapes are B (%s threads); colour is the change of each box's own share from A to B: "
                      "<span class='grew'>red grew</span>, <span class='shrank'>blue shrank</span>, white unchanged "
                      "(A scaled to B's total first, the factor is in the subtitle). The legend gives each category's share "
                      "in A and B, in percentage points (pp) of the total, as the table here." % esc(threads),
                      [("diff-vae-threads.categories.txt", "category table"), ("diff-vae-threads.top.txt", "frames that changed most")]))

    # Op by op (fgtool fold --ops): the same spelling as a PyTorch profiler trace,
    # so a CPU run and a GPU run of one model line up.
    p.append(card(out, "diff-vae-ops.svg", "VAE op by op: 1 thread (A) vs %s threads (B)" % threads, "",
                  "The same two runs folded with <code>fgtool fold --ops</code>: each stack keeps only framework ops "
                  "(<code>aten::addmm</code>, <code>AddmmBackward0</code>, ...) and the program's own functions, the native "
                  "code below an op counted as the op's own time. Colours as in the graph above.",
                  [("diff-vae-ops.top.txt", "ops that changed most")]))
    p.append(card(out, "diff-vae-cpu-gpu.svg", "VAE op by op: CPU (A) vs GPU (B)", "",
                  "The CPU run's op-level fold against the GPU run's PyTorch-profiler trace folded with "
                  "<code>fgtool fold --gpu --ops</code>: GPU kernel time under the op that launched it.",
                  [("diff-vae-cpu-gpu.categories.txt", "categories"), ("diff-vae-cpu-gpu.top.txt", "ops that changed most")]))

    # Frame-pointer recordings of Debian's libtorch produce garbage chains: not shown as a graph.
    if fp is not None:
        p.append("<h2>Why frame pointers fail here</h2>")
        rooted = ("" if not dwarf else " (with DWARF: %s)" % pct(dwarf["rooted"]))
        p.append("<div class='note'><p>The same MLP run was also recorded with frame pointers (<code>fgtool record</code> "
                 "without <code>--dwarf</code>). Debian's libtorch, OpenBLAS and libgomp are built without frame pointers, "
                 "so the kernel's frame-pointer walk stops or goes astray as soon as it enters them: only %s of those "
                 "samples have a stack that reaches <code>main</code> or a thread's start%s, %s are at most 3 frames deep "
                 "(<code>mlp_train;[libgomp.so.1.0.0]</code>)%s. Its flamegraph is not shown here because it would mislead: "
                 "record code without frame pointers with <code>--dwarf</code>, as above. The files are kept for "
                 "comparison: <a href='mlp-fp.folded'>mlp-fp.folded</a>, <a href='mlp-fp.report.txt'>report</a>, "
                 "<a href='diff-mlp-fp-vs-dwarf.categories.txt'>categories, frame pointers vs DWARF</a>.</p></div>"
                 % (pct(fp["rooted"]), rooted, pct(fp["shallow"]),
                    ", and %s carry chains of 8 or more garbage <code>[unknown]</code> frames (up to %d deep)"
                    % (pct(fp["garbage"]), fp["longest"]) if fp["garbage"] > 0 else ""))

    p.append("<p><small>Recordings (<code>*.data</code>), folded stacks, JSON reports and logs are in this folder. "
             "How to read the graphs in more detail: <code>docs/reading-flamegraphs.md</code>.</small></p></body></html>\n")
    return "".join(p)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: demo_index.py OUT_DIR THREADS\n")
        return 2
    out, threads = argv[1], argv[2]
    page = build(out, threads)
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
