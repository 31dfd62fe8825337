#!/usr/bin/env python3
"""Tests of scripts/demo_index.py, the demo's out/index.html writer.

The first tests run the generator on small folds and reports written here.
DemoOutputAgrees checks a real demo run (out/ from `bash scripts/demo.sh`):
every category share and swatch colour the page shows next to a graph is
the one that graph's own legend shows; it is skipped when out/ has no run.

    FGTOOL_SOURCE_DIR=. python3 tests/apps/demo_index_test.py
"""
import json
import os
import re
import sys
import tempfile
import unittest

SRC = os.environ.get("FGTOOL_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import demo_index  # noqa: E402

CHIP = re.compile(r"<span class='cat'><span class='sw' style='background:(#[0-9a-f]{6})'></span>([\w-]+) <b>([^<]+)</b></span>")
LEGEND_ROW = re.compile(r'<g fg:cat="([^"]+)"><title>[^<]*</title><rect [^>]*fill="(#[0-9a-f]{6}|none)"[^>]*/><text [^>]*>([^<]+)</text>')


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def report(cats):
    return json.dumps({"schema": "fgtool-category-report/1", "units": "samples", "total": 100,
                       "resource": [{"name": n, "color": c, "self": s * 100, "self_share": s,
                                     "top": [{"function": fn, "weight": 1, "share": 0.01}]} for n, c, s, fn in cats],
                       "phase": []})


class StackShapes(unittest.TestCase):
    def test_frame_pointer_damage(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.folded")
            garbage = ";".join(["[unknown]"] * 9)
            write(p, "mlp;main;f;g 6\nmlp;[libgomp.so.1] 3\nmlp;%s;h 1\n" % garbage)
            r = demo_index.stack_damage(p)
            self.assertAlmostEqual(r["rooted"], 0.6)
            self.assertAlmostEqual(r["shallow"], 0.3)
            self.assertAlmostEqual(r["garbage"], 0.1)
            self.assertEqual(r["longest"], 9)
            write(p, "")
            self.assertIsNone(demo_index.stack_damage(p))
        self.assertIsNone(demo_index.stack_damage(os.path.join(SRC, "no-such.folded")))

    def test_wall_split_merges_preempted_states(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "w.folded")
            write(p, "t;run 30\nt;wait;[off-cpu: S] 50\nt;x;[off-cpu: R] 15\nt;y;[off-cpu: R+] 5\n")
            r = demo_index.wall_split(p)
            self.assertEqual((r["on"], r["off"]), (30, 70))
            self.assertEqual(r["states"], {"S": 50, "R": 20})

    def test_share_format_matches_legend(self):
        self.assertEqual(demo_index.pct(0.8237), "82.4%")
        self.assertEqual(demo_index.pct(0.0004), "<0.1%")
        self.assertEqual(demo_index.pct(0), "0.0%")


class PageFromFiles(unittest.TestCase):
    def test_page_groups_numbers_and_leaves_out_the_frame_pointer_graph(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("mlp-dwarf", "vae-1thread", "vae-4threads", "diff-vae-threads", "mlp-wall", "mlp-offcpu", "mlp-fp"):
                write(os.path.join(d, name + ".svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>")
            write(os.path.join(d, "mlp-dwarf.report.json"), report([("omp", "#ef9000", 0.6, "[libgomp.so.1]"), ("gemm", "#0e64ac", 0.3, "sgemm_k")]))
            write(os.path.join(d, "vae-1thread.report.json"), report([("gemm", "#0e64ac", 0.7, "sgemm_k"), ("omp", "#ef9000", 0.01, "x")]))
            write(os.path.join(d, "vae-4threads.report.json"), report([("omp", "#ef9000", 0.8, "x"), ("gemm", "#0e64ac", 0.1, "sgemm_k")]))
            write(os.path.join(d, "diff-vae-threads.categories.json"), json.dumps({
                "a": {"units": "samples", "total": 100}, "b": {"units": "samples", "total": 400},
                "resource": [{"name": "gemm", "a_share": 0.7, "b_share": 0.1, "change_points": -60.0},
                             {"name": "omp", "a_share": 0.01, "b_share": 0.8, "change_points": 79.0}]}))
            write(os.path.join(d, "vae-1thread.log"), "vae_train: ...; 1 threads on cpu\nepoch 1/1: samples 10 samples/s 800 time 1.00s\ndone: 1.10s\n")
            write(os.path.join(d, "vae-4threads.log"), "vae_train: ...; 4 threads on cpu\nepoch 1/1: samples 10 samples/s 200 time 4.00s\ndone: 4.10s\n")
            write(os.path.join(d, "mlp-wall.folded"), "t;run 25\nt;[off-cpu: S] 75\n")
            write(os.path.join(d, "mlp-fp.folded"), "mlp;[libgomp.so.1] 9\nmlp;main;f 1\n")
            page = demo_index.build(d, "4")
        sections = [m.group(1) for m in re.finditer(r"<h2>([^<]*)</h2>", page)]
        self.assertEqual([s.split(":")[0] for s in sections], ["On-CPU", "Off-CPU and wall clock", "Differential", "Why frame pointers fail here"])
        on_cpu = page[page.index("<h2>On-CPU"):page.index("<h2>Off-CPU")]
        self.assertIn("<img src='mlp-dwarf.svg'", on_cpu)
        self.assertEqual(CHIP.findall(on_cpu)[:2], [("#ef9000", "omp", "60.0%"), ("#0e64ac", "gemm", "30.0%")])
        self.assertIn("4.0x the sampled CPU time", page)
        self.assertIn("4.0x slower", page)
        self.assertIn("gemm 70.0% &rarr; 10.0%", page)  # largest change first
        self.assertIn("on-CPU <b>25.0%</b>, off-CPU <b>75.0%</b>", page)
        self.assertIn("only 10.0% of those samples have a stack that reaches", page)
        self.assertNotIn("mlp-fp.svg", page)  # explained, not shown


def demo_page():
    """out/index.html if scripts/demo_index.py wrote it (an older demo.sh wrote a plain list), else None."""
    try:
        with open(os.path.join(SRC, "out", "index.html"), errors="replace") as f:
            page = f.read()
    except OSError:
        return None
    return page if "content='scripts/demo_index.py'" in page else None


@unittest.skipUnless(demo_page(), "no demo run of scripts/demo_index.py in out/ (bash scripts/demo.sh)")
class DemoOutputAgrees(unittest.TestCase):
    def setUp(self):
        self.out = os.path.join(SRC, "out")
        self.page = demo_page()

    def legend(self, svg):
        with open(os.path.join(self.out, svg), errors="replace") as f:
            text = f.read()
        return {cat: (fill, label.replace("&gt;", ">")) for cat, fill, label in LEGEND_ROW.findall(text)}

    def test_every_chip_is_its_graphs_legend_row(self):
        cards = self.page.split("<div class='card'>")[1:]
        checked = 0
        for card in cards:
            svg = re.search(r"<a class='thumb' href='([^']+)'", card).group(1)
            legend = self.legend(svg)
            for color, name, share in CHIP.findall(card):
                self.assertIn(name, legend, "%s: %s is not in the graph's legend" % (svg, name))
                self.assertEqual(legend[name], (color, "%s %s" % (name, share)), svg)
                checked += 1
        self.assertGreater(checked, 5)

    def test_thread_change_table_is_the_diff_legend(self):
        card = next(c for c in self.page.split("<div class='card'>") if "href='diff-vae-threads.svg'" in c)
        rows = re.findall(r"<tr><td>([\w-]+)</td><td>([^<]+)</td>"
                          r"<td>([^<]+)</td><td class='\w+'>([^<]+)</td></tr>", card)
        self.assertGreater(len(rows), 2)
        legend = self.legend("diff-vae-threads.svg")
        for name, a, b, change in rows:
            self.assertEqual(legend[name], ("none", "%s %s -> %s (%s)" % (name, a, b, change)))

    def test_wall_split_is_the_wall_reports_off_cpu_share(self):
        m = re.search(r"on-CPU <b>([^<]+)</b>, off-CPU <b>([^<]+)</b>", self.page)
        self.assertIsNotNone(m)
        with open(os.path.join(self.out, "mlp-wall.report.json")) as f:
            rep = json.load(f)
        off = next(c["self_share"] for c in rep["resource"] if c["name"] == "off-cpu")
        self.assertEqual(m.group(2), demo_index.pct(off))
        self.assertAlmostEqual(float(m.group(1)[:-1]) + float(m.group(2)[:-1]), 100.0, delta=0.11)

    def test_links_resolve_and_no_frame_pointer_graph(self):
        for href in re.findall(r"(?:href|src)='([^']+)'", self.page):
            self.assertTrue(os.path.exists(os.path.join(self.out, href)), href)
        self.assertNotIn("mlp-fp.svg", self.page)


if __name__ == "__main__":
    unittest.main(verbosity=2)
