// Browser tests of fgtool's interactive SVG flamegraphs in a real headless
// Chromium (Debian's /usr/bin/chromium driven by playwright-core; nothing is
// downloaded). SVGs are made by the built fgtool from real folded profiles in
// testdata/, and every expected number is computed here from the folded text.
//
//   node run.mjs --fgtool BUILD/bin/fgtool [--artifacts DIR] [--screenshots DIR] [--only a,b]
//
// Exit status: 0 all passed, 1 a failure, 77 skipped (Chromium missing or
// unable to start; the reason is printed). --screenshots DIR also writes the
// README images (scripts/screenshots.sh).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readFolded, writeFolded, buildTree, walk, findPath, pathKey, matchedShare, formatCount } from './folded.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SKIP = 77;

function parseArgs(argv) {
  const o = {
    fgtool: process.env.FGTOOL_BIN || '',
    source: path.resolve(here, '../..'),
    artifacts: path.join(os.tmpdir(), 'fgtool-browser-artifacts'),
    screenshots: '',
    only: '',
    chromium: process.env.FGTOOL_CHROMIUM || '/usr/bin/chromium',
  };
  for (let i = 2; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    if (!(k in o) || i + 1 >= argv.length) throw new Error(`run.mjs: unknown or incomplete option ${argv[i]}`);
    o[k] = argv[++i];
  }
  if (!o.fgtool) throw new Error('run.mjs: --fgtool PATH (the built fgtool) is required');
  return o;
}
const opt = parseArgs(process.argv);
const testdata = (...p) => path.join(opt.source, 'testdata', ...p);
const art = (...p) => path.join(opt.artifacts, ...p);
fs.mkdirSync(opt.artifacts, { recursive: true });

function skip(reason) {
  console.log(`SKIP browser tests: ${reason}`);
  process.exit(SKIP);
}

// ---------------------------------------------------------------- launching
if (!fs.existsSync(opt.chromium)) skip(`${opt.chromium} not found (install it with scripts/setup.sh --browser)`);
let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  console.error(`browser tests: playwright-core is not installed in ${here}/node_modules: ` +
                `run scripts/setup.sh --browser (npm ci in tests/browser). ${e.message}`);
  process.exit(1);
}
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fgtool-chromium-'));
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: opt.chromium,
    headless: true,
    viewport: { width: 1200, height: 800 },
    timeout: 60000,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
           '--no-first-run', '--disable-sync', '--disable-quic', '--disable-dev-shm-usage'],
  });
} catch (e) {
  fs.rmSync(userDataDir, { recursive: true, force: true });
  skip(`Chromium (${opt.chromium}) could not be launched: ${String(e.message).split('\n')[0]}`);
}

// ---------------------------------------------------------------- helpers
function fgtool(args, outFile) {
  const out = execFileSync(opt.fgtool, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'],
                                              env: { ...process.env, FGTOOL_NO_PROGRESS: '1' } });
  if (outFile) fs.writeFileSync(outFile, out);
  return out;
}

class Failure extends Error {}
function check(cond, msg) { if (!cond) throw new Failure(msg); }
function eq(actual, expected, msg) {
  if (actual !== expected) throw new Failure(`${msg}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}
function near(actual, expected, tol, msg) {
  if (!(Math.abs(actual - expected) <= tol)) throw new Failure(`${msg}: expected ${expected} +-${tol}, got ${actual}`);
}

// A page on an SVG that records console errors and uncaught exceptions.
async function openSvg(file, query = '') {
  const page = await context.newPage();
  page.errors = [];
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => page.errors.push(`exception: ${e.message}`));
  await page.goto(pathToFileURL(file).href + query, { waitUntil: 'load', timeout: 60000 });
  return page;
}
function noErrors(page, what) {
  check(page.errors.length === 0, `${what}: console errors: ${page.errors.join(' | ')}`);
}

// Every drawn frame as the DOM has it now.
async function frames(page) {
  return page.evaluate(() => Array.from(document.getElementById('frames').children, (g, i) => {
    const r = g.querySelector('rect'), t = g.querySelector('text'), title = g.querySelector('title').textContent;
    return {
      i, title, name: title.slice(0, title.lastIndexOf(' (')),
      x: Number(g.getAttribute('fg:x')), w: Number(g.getAttribute('fg:w')), cat: g.getAttribute('fg:c'),
      rx: r.getAttribute('x'), ry: Number(r.getAttribute('y')), rw: r.getAttribute('width'),
      rh: Number(r.getAttribute('height')), fill: r.getAttribute('fill'), text: t ? t.textContent : null,
      cls: g.getAttribute('class') || '', shown: getComputedStyle(g).display !== 'none',
    };
  }));
}

// Depth (root 0) and call path of each frame, from the geometry only: a
// frame's parent is the frame one row rootward whose [x, x+w) contains it.
function withPaths(fs_, frameHeight = 16) {
  const root = fs_.find((f) => f.x === 0 && f.name === 'all' && fs_.every((g) => g.w <= f.w));
  const inverted = fs_.some((f) => f.ry > root.ry);  // icicle: root at the top
  const byDepth = [];
  for (const f of fs_) {
    f.depth = Math.round((inverted ? f.ry - root.ry : root.ry - f.ry) / frameHeight);
    (byDepth[f.depth] ||= []).push(f);
  }
  for (const row of byDepth) row && row.sort((a, b) => a.x - b.x);
  for (const f of [...fs_].sort((a, b) => a.depth - b.depth)) {
    if (f.depth === 0) { f.path = []; f.parent = null; continue; }
    const row = byDepth[f.depth - 1];
    const eps = 1e-9 * Math.max(1, f.w);
    const p = row.find((q) => q.x <= f.x + eps && f.x + f.w <= q.x + q.w + eps);
    if (!p) throw new Failure(`frame ${f.title} at depth ${f.depth} has no parent frame`);
    f.parent = p;
    f.path = [...p.path, f.name];
  }
  return fs_;
}
const isAncestor = (a, f) => { for (let p = f.parent; p; p = p.parent) if (p === a) return true; return false; };
const rgb = (s) => { const m = /^rgb\((\d+),(\d+),(\d+)\)$/.exec(s); return m ? m.slice(1).map(Number) : null; };
const textOf = (page, sel) => page.evaluate((s) => document.querySelector(s).textContent, sel);
const pct2 = (part, whole) => (100 * part / whole).toFixed(2) + '%';

async function searchVia(page, trigger, term) {
  const seen = new Promise((resolve) => page.once('dialog', async (d) => {
    const info = { type: d.type(), message: d.message(), defaultValue: d.defaultValue() };
    await d.accept(term);
    resolve(info);
  }));
  await trigger();
  return seen;
}
// The Search button prompts; while a search is shown it reads "Reset Search"
// and resets, so a new term takes two clicks.
const clickSearch = (page, term) => searchVia(page, async () => {
  if ((await textOf(page, '#search')) === 'Reset Search') await page.click('#search');
  await page.click('#search');
}, term);

async function shot(page, name, readmeName) {
  // fullPage screenshots of a top-level SVG document hang in this Chromium:
  // size the viewport to the image instead.
  const file = art(name);
  const size = await page.evaluate(() => [document.documentElement.width.baseVal.value, document.documentElement.height.baseVal.value]);
  await page.setViewportSize({ width: Math.ceil(size[0]), height: Math.ceil(size[1]) });
  await page.screenshot({ path: file });
  if (opt.screenshots && readmeName) {
    fs.mkdirSync(opt.screenshots, { recursive: true });
    fs.copyFileSync(file, path.join(opt.screenshots, readmeName));
  }
}

// ---------------------------------------------------------------- fixtures
// The main profile: a real DWARF-unwound libtorch training loop (deep stacks).
const mainFolded = testdata('categories', 'libtorch_dwarf.folded');
const mainStacks = readFolded(mainFolded);
const mainTree = buildTree(mainStacks);
const mainSvg = art('main.svg');
// --minwidth 0: every stack of the input is drawn, so the DOM must hold the
// whole tree (pruning is exercised by the large profile).
fgtool(['svg', '--minwidth', '0', '--title', 'libtorch training loop (perf, DWARF unwinding)', mainFolded, '-o', mainSvg]);

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// ---------------------------------------------------------------- scenarios
test('load: no console errors, DOM frames = the folded call tree', async () => {
  const page = await openSvg(mainSvg);
  noErrors(page, 'main.svg');
  const fr = withPaths(await frames(page));
  let nodes = 0;
  for (const _ of walk(mainTree)) nodes++;
  eq(fr.length, nodes, 'frames drawn (tree nodes incl. root)');
  for (const f of fr) {
    const n = findPath(mainTree, f.path);
    check(n, `DOM frame ${f.path.join(';')} is not in the folded input`);
    eq(f.w, n.total, `fg:w of ${f.path.join(';')}`);
  }
  await shot(page, 'normal.png', 'flamegraph.png');
  await page.close();
});

// The widest frame at `depth` that has a sibling and children.
function pickZoomTarget(fr, depth) {
  const cands = fr.filter((f) => f.depth === depth && fr.some((s) => s !== f && s.parent === f.parent && s.depth === depth)
                               && fr.some((c) => c.parent === f));
  cands.sort((a, b) => b.w - a.w);
  check(cands.length, `no frame at depth ${depth} with siblings and children`);
  return cands[0];
}

test('hover shows name, count and percentage', async () => {
  const page = await openSvg(mainSvg);
  const fr = withPaths(await frames(page));
  // A few frames at different depths, each checked against the folded file.
  const picks = [3, 6, 9].map((d) => fr.filter((f) => f.depth === d).sort((a, b) => b.w - a.w)[0]).filter(Boolean);
  check(picks.length === 3, 'profile too shallow');
  for (const f of picks) {
    const n = findPath(mainTree, f.path);
    await page.hover(`#frames > g:nth-child(${f.i + 1})`);
    const details = await textOf(page, '#details');
    eq(details, `Function: ${n.name} (${formatCount(n.total)} samples, ${pct2(n.total, mainTree.total)})`,
       `details bar while hovering ${f.path.join(';')}`);
  }
  await page.mouse.move(2, 2);
  eq((await textOf(page, '#details')).trim(), '', 'details bar after the mouse left the frames');
  noErrors(page, 'hover');
  await page.close();
});

async function zoomTest(svgFile, readme) {
  const page = await openSvg(svgFile);
  const before = withPaths(await frames(page));
  const z = pickZoomTarget(before, 4);
  await page.click(`#frames > g:nth-child(${z.i + 1})`);
  await page.waitForSelector('#unzoom:not(.hide)', { timeout: 5000 });
  const after = await frames(page);
  const graph = 1180, ratio = graph / z.w;
  let hidden = 0;
  for (const f of before) {
    const a = after[f.i], where = f.path.join(';') || 'all';
    if (f === z) {
      check(a.shown, 'zoomed frame hidden');
      near(Number(a.rx), 10, 0.05, 'zoomed frame x');
      near(Number(a.rw), graph, 0.05, 'zoomed frame width');
    } else if (isAncestor(f, z)) {
      check(a.shown && / parent|^parent/.test(a.cls), `ancestor ${where} not shown as parent (class "${a.cls}")`);
      near(Number(a.rw), graph, 0.05, `ancestor ${where} width`);
    } else if (isAncestor(z, f)) {
      check(a.shown, `descendant ${where} hidden`);
      near(Number(a.rx), 10 + (f.x - z.x) * ratio, 0.06, `descendant ${where} x`);
      near(Number(a.rw), f.w * ratio, 0.06, `descendant ${where} width`);
    } else {
      check(!a.shown, `${where} (neither ancestor nor descendant of the zoomed frame) still shown`);
      hidden++;
    }
  }
  check(before.some((f) => f.parent === z.parent && f !== z && !after[f.i].shown), 'a sibling was hidden');
  check(hidden > 0, 'zoom hid nothing');
  // Zoom further in (a child), then back out to an ancestor, then reset:
  // every frame moved by any of these zooms must come back.
  const child = before.filter((f) => f.parent === z).sort((a, b) => b.w - a.w)[0];
  await page.click(`#frames > g:nth-child(${child.i + 1})`);
  near(Number((await frames(page))[child.i].rw), graph, 0.05, 'second zoom width');
  await page.click(`#frames > g:nth-child(${z.parent.i + 1})`);
  near(Number((await frames(page))[z.parent.i].rw), graph, 0.05, 'zoom out to an ancestor: width');
  await page.click('#unzoom');
  await page.waitForSelector('#unzoom.hide', { state: 'attached', timeout: 5000 });
  const restored = await frames(page);
  for (const f of before) {
    const r = restored[f.i];
    for (const k of ['rx', 'rw', 'text', 'cls', 'shown', 'fill'])
      eq(r[k], f[k], `after Reset Zoom, ${k} of ${f.path.join(';') || 'all'}`);
  }
  if (readme) {
    // The README's zoomed view: the program's main() (the training loop).
    const main = before.filter((f) => f.name === 'main').sort((a, b) => b.w - a.w)[0] || z;
    await page.click(`#frames > g:nth-child(${main.i + 1})`);
    await shot(page, 'zoomed.png', 'flamegraph-zoomed.png');
  }
  noErrors(page, 'zoom');
  await page.close();
}
test('tooltips read ms/s for time profiles; a cut-short stack says why', async () => {
  // A fold of perf.data carries its unit ("# fgtool units=ns"): tooltips
  // must not call 12345678901 nanoseconds "samples".
  const folded = art('ns.folded');
  fs.writeFileSync(folded, '# fgtool units=ns\nproc;main;compute 12345678901\nproc;main;io 4567000000\nproc;[unknown];lib 456000000\n');
  const svgFile = art('ns.svg');
  fgtool(['svg', '--minwidth', '0', folded, '-o', svgFile]);
  const page = await openSvg(svgFile);
  noErrors(page, 'ns.svg');
  const fr = await frames(page);
  const total = 12345678901 + 4567000000 + 456000000;
  for (const [name, text] of [['compute', `12.3 s, ${pct2(12345678901, total)}`], ['io', `4.57 s, ${pct2(4567000000, total)}`],
                              ['all', '17.4 s, 100.00%'],
                              ['[unknown]', `456.0 ms, ${pct2(456000000, total)}; callers lost: the user-stack copy ran out or a frame-pointer chain broke; record with fgtool record --dwarf --stack-size 65528`]]) {
    const f = fr.find((g) => g.name === name);
    check(f, `no frame ${name}`);
    await page.hover(`#frames > g:nth-child(${f.i + 1})`);
    eq(await textOf(page, '#details'), `Function: ${name} (${text})`, `details of ${name}`);
  }
  check(!fr.some((f) => /samples/.test(f.title)), 'a nanosecond profile says "samples"');
  eq(fr.find((f) => f.name === '[unknown]').fill, 'url(#fg_cutshort)', 'cut-short frame fill');
  await page.close();
});
test('click zooms; Reset Zoom restores every frame', () => zoomTest(mainSvg, true));
test('icicle (--inverted): click zooms; Reset Zoom restores every frame', () => {
  const svgFile = art('main-inverted.svg');
  fgtool(['svg', '--inverted', '--minwidth', '0', mainFolded, '-o', svgFile]);
  return zoomTest(svgFile, false);
});

// Regexes over the real frame names; at least one must have nested hits.
const searchTerms = ['sgemm', 'torch::autograd', '^at::|^c10::', 'Engine|evaluate_function', 'page_fault'];

test('search highlights exactly the matching frames, Matched% counts nesting once', async () => {
  const page = await openSvg(mainSvg);
  const fr = withPaths(await frames(page));
  let nestedSeen = false;
  for (const term of searchTerms) {
    const re = new RegExp(term);
    const dlg = await clickSearch(page, term);
    eq(dlg.type, 'prompt', 'Search button opens a prompt');
    const now = await frames(page);
    const lit = new Set(now.filter((f) => f.fill === 'rgb(208,0,208)').map((f) => pathKey(fr[f.i].path)));
    const want = new Set();
    for (const [n, d] of walk(mainTree)) if (d > 0 && re.test(n.name)) want.add(pathKey(n.path));
    check(want.size > 0, `search term ${term} matches nothing in the profile (pick another)`);
    eq(lit.size, want.size, `frames highlighted for /${term}/`);
    for (const k of want) check(lit.has(k), `/${term}/: ${k.split('\u0001').join(';')} not highlighted`);
    for (const k of want) {
      const p = k.split('\u0001');
      for (let i = 1; i < p.length; i++) if (want.has(pathKey(p.slice(0, i)))) nestedSeen = true;
    }
    const share = matchedShare(mainStacks, re);
    eq(await textOf(page, '#matched'), `Matched: ${(100 * share).toFixed(1)}%`, `Matched text for /${term}/`);
    if (term === searchTerms[0]) await shot(page, 'searched.png', 'flamegraph-search.png');
  }
  check(nestedSeen, 'no search term had nested matches');
  // "ic" toggles case-insensitive matching and re-runs the search.
  await clickSearch(page, 'SGEMM');
  eq(await textOf(page, '#matched'), 'Matched: 0% (no match)', 'Matched for /SGEMM/');
  await page.click('#ignorecase');
  eq(await textOf(page, '#matched'), `Matched: ${(100 * matchedShare(mainStacks, /sgemm/i)).toFixed(1)}%`, 'Matched for /SGEMM/i');
  check(/[?&]ic=1/.test(page.url()), `ic=1 not in the URL: ${page.url()}`);
  await page.click('#ignorecase');
  // Ctrl-F edits the current term (prompt pre-filled); the button, now
  // "Reset Search", resets without asking: every original fill is back.
  const edit = await searchVia(page, () => page.keyboard.press('Control+f'), 'sgemm');
  eq(edit.defaultValue, 'SGEMM', 'prompt pre-filled with the current term');
  eq(await textOf(page, '#search'), 'Reset Search', 'search button label while searching');
  let asked = false;
  const onDialog = (d) => { asked = true; d.dismiss(); };
  page.on('dialog', onDialog);
  await page.click('#search');
  page.off('dialog', onDialog);
  check(!asked, 'Reset Search opened a dialog instead of resetting');
  eq(await textOf(page, '#search'), 'Search', 'search button label after reset');
  check(!/[?&]s=/.test(page.url()), `search still in the URL after reset: ${page.url()}`);
  const reset = await frames(page);
  for (const f of fr) eq(reset[f.i].fill, f.fill, 'fill after Reset Search');
  eq((await textOf(page, '#matched')).trim(), '', 'Matched text after reset');
  noErrors(page, 'search');
  await page.close();
});

test('hostile frame names stay inert text', async () => {
  const svgFile = art('hostile.svg');
  fgtool(['svg', testdata('folded', 'hostile.folded'), '-o', svgFile]);
  const page = await openSvg(svgFile);
  page.on('dialog', (d) => {
    if (d.type() !== 'prompt') { page.errors.push(`unexpected ${d.type()}: ${d.message()}`); d.dismiss(); }
  });
  eq(await page.evaluate(() => document.getElementsByTagName('script').length), 1, 'script elements');
  const fr = await frames(page);
  const names = ['<script>alert(1)</script>', 'a&b', 'end]]>cdata', '<!-- comment -->'];
  for (const n of names) {
    const f = fr.find((g) => g.name === n);
    check(f, `frame ${n} missing or mangled; names: ${fr.map((g) => g.name).join(' | ')}`);
    await page.hover(`#frames > g:nth-child(${f.i + 1})`);
    check((await textOf(page, '#details')).startsWith(`Function: ${n} (`), `details for ${n}`);
  }
  // A regex with metacharacters from the names: matches literally.
  await clickSearch(page, '<script>|\\]\\]>');
  eq((await frames(page)).filter((f) => f.fill === 'rgb(208,0,208)').length, 2, 'frames lit by /<script>|\\]\\]>/');
  noErrors(page, 'hostile.svg');
  await page.close();
});

test('Ctrl-F opens search; Escape resets it', async () => {
  const page = await openSvg(mainSvg);
  await page.mouse.move(600, 10);
  const dlg = await searchVia(page, () => page.keyboard.press('Control+f'), 'sgemm');
  eq(dlg.type, 'prompt', 'Ctrl-F dialog type');
  check(/search/i.test(dlg.message), `Ctrl-F prompt text: ${dlg.message}`);
  eq(await textOf(page, '#matched'), `Matched: ${(100 * matchedShare(mainStacks, /sgemm/)).toFixed(1)}%`, 'Matched after Ctrl-F');
  await page.keyboard.press('Escape');
  eq((await textOf(page, '#matched')).trim(), '', 'Matched after Escape');
  noErrors(page, 'ctrl-f');
  await page.close();
});

test('URL parameters reproduce zoom and search after reload', async () => {
  const page = await openSvg(mainSvg);
  const fr = withPaths(await frames(page));
  const z = pickZoomTarget(fr, 5);
  await page.click(`#frames > g:nth-child(${z.i + 1})`);
  await clickSearch(page, 'sgemm');
  const url = page.url();
  check(/[?&]x=/.test(url) && /[?&]y=/.test(url) && /[?&]s=sgemm/.test(url), `URL does not hold the view: ${url}`);
  const zoomedMatched = await textOf(page, '#matched');
  const under = mainStacks.filter((st) => z.path.every((f, i) => st.frames[i] === f));
  eq(zoomedMatched, `Matched: ${(100 * matchedShare(mainStacks, /sgemm/)).toFixed(1)}% ` +
     `(${(100 * matchedShare(under, /sgemm/)).toFixed(1)}% of zoomed)`, 'Matched while zoomed');
  const view = (await frames(page)).map((f) => [f.rx, f.rw, f.shown, f.fill, f.cls]);
  await page.reload({ waitUntil: 'load' });
  eq(page.url(), url, 'URL after reload');
  const again = await frames(page);
  eq(JSON.stringify(again.map((f) => [f.rx, f.rw, f.shown, f.fill, f.cls])), JSON.stringify(view), 'view after reload');
  eq(await textOf(page, '#matched'), zoomedMatched, 'Matched after reload');
  check(await page.$('#unzoom:not(.hide)'), 'Reset Zoom not offered after reload');
  // A fresh tab on the same link shows the same view.
  const page2 = await context.newPage();
  await page2.goto(url, { waitUntil: 'load' });
  eq(JSON.stringify((await frames(page2)).map((f) => [f.rx, f.rw, f.shown, f.fill, f.cls])), JSON.stringify(view), 'view in a new tab');
  noErrors(page, 'url');
  await page2.close();
  await page.close();
});

// One definition of a frame's category (docs/reading-flamegraphs.md): a
// legend row's share is the width drawn in its colour (each frame's own
// part), which is what clicking it ("cat:NAME") reports as Matched, and for
// resources what `fgtool report` says.
const HIGHLIGHT = 'rgb(208,0,208)';
const CUT_SHORT = 'cut short (callers unknown)';
const share1 = (part, whole) => {  // as the legend and "Matched" print a share
  const v = whole > 0 ? 100 * part / whole : 0, r = Math.floor(v * 10 + 0.5) / 10;
  return v > 0 && r === 0 ? '<0.1%' : r.toFixed(1) + '%';
};
async function legendRows(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll('#legend > g'), (g) => ({
    cat: g.getAttribute('fg:cat'), text: g.querySelector('text').textContent, fill: g.querySelector('rect').getAttribute('fill'),
    title: g.querySelector('title').textContent,
  })));
}
// The drawn own width of every frame, from the DOM geometry alone.
function ownWidths(fr) {
  const own = new Map(fr.map((f) => [f, f.w]));
  for (const f of fr) if (f.parent) own.set(f.parent, own.get(f.parent) - f.w);
  return own;
}

test('category legend = width drawn in each colour = Matched of its cat: search = report', async () => {
  const folded = mainFolded;
  const svgFile = art('categories.svg');
  const help = fgtool(['svg', '--help']);
  check(/--colors category|category/.test(help), 'fgtool svg --help does not mention --colors category');
  fgtool(['svg', '--colors', 'category', '--minwidth', '0', folded, '-o', svgFile]);
  const report = JSON.parse(fgtool(['report', '--format', 'json', folded]));
  const page = await openSvg(svgFile);
  noErrors(page, 'categories.svg');
  const legend = await legendRows(page);
  check(legend.length > 1, 'no legend');
  const fr = withPaths(await frames(page));
  const own = ownWidths(fr);
  const total = fr.find((f) => f.depth === 0).w;
  const drawn = new Map();
  // Stacks cut short (root-side [unknown] under the process frame) are drawn
  // hatched and counted by their whole width: the share of samples whose
  // callers are unknown, in their own legend section ("stacks:").
  let markerOwn = 0;
  for (const f of fr) {
    if (f.cat === CUT_SHORT) {
      check(f.depth === 2 && f.name === '[unknown]', `${f.title} marked cut short`);
      eq(f.fill, 'url(#fg_cutshort)', 'cut-short frames are hatched');
      drawn.set(f.cat, (drawn.get(f.cat) || 0) + f.w);
      markerOwn += own.get(f);
    } else if (f.cat) drawn.set(f.cat, (drawn.get(f.cat) || 0) + own.get(f));
    else check(f.depth === 0, `frame ${f.title} has no category`);
  }
  check(drawn.get(CUT_SHORT) > 0, 'libtorch_dwarf.folded has stacks cut short, none drawn as such');
  // Every category drawn has exactly one row; rows say the drawn share.
  eq(legend.map((l) => l.cat).sort().join(','), [...drawn.keys()].sort().join(','), 'legend rows = categories drawn');
  let sum = markerOwn;
  for (const l of legend) {
    eq(l.text, `${l.cat} ${share1(drawn.get(l.cat), total)}`, `legend text of ${l.cat}`);
    if (l.cat !== CUT_SHORT) sum += drawn.get(l.cat);
  }
  near(sum, total, 1e-6 * total, 'category rows (with the markers\' own width) add up to the whole graph');
  // Resource rows are the report's resource shares (self), colour included.
  const sections = await page.evaluate(() => Array.from(document.querySelectorAll('#legend > text'), (t) => t.textContent));
  eq(sections.join(','), 'resource:,phase:,stacks:', 'legend section labels');
  // A marker's tooltip says why its callers are missing and how to record them.
  const marker = fr.find((f) => f.cat === CUT_SHORT);
  check(/callers lost: the user-stack copy ran out or a frame-pointer chain broke; record with fgtool record --dwarf --stack-size 65528\)$/.test(marker.title),
        `cut-short tooltip: ${marker.title}`);
  await page.hover(`#frames > g:nth-child(${marker.i + 1})`);
  check((await textOf(page, '#details')).includes('callers lost'), 'details bar of a cut-short frame');
  await page.mouse.move(2, 2);
  for (const r of report.resource.slice(0, -1)) {
    const l = legend.find((x) => x.cat === r.name);
    if (r.self === 0) { check(!l || drawn.get(r.name) === 0, `${r.name}: no self time in the report but drawn`); continue; }
    check(l, `report resource ${r.name} (${share1(r.self, report.total)}) missing from the legend`);
    eq(l.text, `${r.name} ${share1(r.self, report.total)}`, `legend share of ${r.name} vs the report`);
    eq(l.fill.toLowerCase(), r.color.toLowerCase(), `legend colour of ${r.name}`);
    check(/\(resource\)/.test(l.title), `${r.name} row not in the resource section: ${l.title}`);
  }
  // No two categories share a swatch colour, and none is the highlight.
  eq(new Set(legend.map((l) => l.fill.toLowerCase())).size, legend.length, 'distinct legend colours');
  check(!legend.some((l) => l.fill === HIGHLIGHT), 'a category uses the search highlight colour');
  await shot(page, 'categories.png', 'flamegraph-categories.png');
  // Clicking a row searches its category: exactly its frames light up and
  // Matched says the row's share, also while zoomed.
  for (const [k, l] of legend.entries()) {
    await page.locator('#legend > g').nth(k).click();
    const lit = (await frames(page)).filter((f) => f.fill === HIGHLIGHT).length;
    eq(lit, fr.filter((f) => f.cat === l.cat).length, `frames lit by clicking legend row "${l.cat}"`);
    eq(await textOf(page, '#matched'), `Matched: ${l.text.slice(l.cat.length + 1)}`, `Matched after clicking ${l.cat}`);
  }
  const z = pickZoomTarget(fr, 3);
  await page.click(`#frames > g:nth-child(${z.i + 1})`);
  const top = legend[0];
  await page.locator('#legend > g').nth(0).click();
  let zown = 0;
  for (const f of fr) if (f.cat === top.cat && (f === z || isAncestor(z, f))) zown += own.get(f);
  eq(await textOf(page, '#matched'), `Matched: ${share1(drawn.get(top.cat), total)} (${share1(zown, z.w)} of zoomed)`,
     `Matched for ${top.cat} while zoomed`);
  noErrors(page, 'legend');
  await page.close();
});

test('wall-clock graph: frames blend warm to cold by their off-CPU share, split in the tooltip', async () => {
  const folded = testdata('folded', 'wall.folded');
  const stacks = readFolded(folded);
  const svgFile = art('wall.svg');
  fgtool(['svg', '--minwidth', '0', folded, '-o', svgFile]);
  // off-CPU weight per path: stacks holding an [off-cpu...] frame.
  const offOf = new Map(), totOf = new Map();
  for (const { frames: fs_, weight } of stacks) {
    const off = fs_.some((f) => f.startsWith('[off-cpu'));
    for (let i = 0; i <= fs_.length; i++) {
      const k = pathKey(fs_.slice(0, i));
      totOf.set(k, (totOf.get(k) || 0) + weight);
      if (off) offOf.set(k, (offOf.get(k) || 0) + weight);
    }
  }
  const page = await openSvg(svgFile);
  noErrors(page, 'wall.svg');
  const fr = withPaths(await frames(page));
  let kinds = { on: 0, off: 0, mixed: 0 };
  for (const f of fr) {
    if (f.depth === 0) continue;
    const k = pathKey(f.path), share = (offOf.get(k) || 0) / totOf.get(k);
    const [r, , b] = rgb(f.fill);
    check(f.title.includes(`on-CPU ${(100 * (1 - share)).toFixed(1)}%, off-CPU ${(100 * share).toFixed(1)}%`),
          `${f.path.join(';')}: tooltip lacks the on/off split (${(100 * share).toFixed(1)}% off): ${f.title}`);
    if (share === 0) { check(r > b + 100, `${f.name} is on-CPU only but not warm: ${f.fill}`); kinds.on++; }
    else if (share === 1) { check(b > r + 50, `${f.name} is off-CPU only but not cold: ${f.fill}`); kinds.off++; }
    else {
      // A blend: bluer than the warm palette ever is, warmer than the cold one.
      check(b > 60 && r > 100, `${f.name} (${(100 * share).toFixed(0)}% off-CPU) is not a blend: ${f.fill}`);
      kinds.mixed++;
    }
  }
  check(kinds.on && kinds.off && kinds.mixed, `wall.folded should give all three kinds of frame: ${JSON.stringify(kinds)}`);
  await shot(page, 'wall.png');
  await page.close();
});

test('diff --by category: frames carry categories, neutral swatches, Matched = B share', async () => {
  const a = testdata('categories', 'libtorch_fp.folded'), b = mainFolded, svgFile = art('diff-cat.svg');
  fgtool(['diff', '--by', 'category', '--minwidth', '0', a, b, '-o', svgFile]);
  const page = await openSvg(svgFile);
  noErrors(page, 'diff-cat.svg');
  const legend = await legendRows(page);
  check(legend.length > 3, 'no category legend on the diff');
  for (const l of legend) eq(l.fill, 'none', `swatch of ${l.cat} on a diff (red/blue mean change there)`);
  const sub = await textOf(page, '#subtitle');
  check(sub.startsWith('A = libtorch_fp.folded (scaled x') && sub.includes(', B = libtorch_dwarf.folded;'),
        `diff subtitle does not name A and B: ${sub}`);
  check(/scaled x[0-9.]+/.test(sub), `diff subtitle lacks the normalisation factor: ${sub}`);
  const fr = withPaths(await frames(page));
  const own = ownWidths(fr), total = fr.find((f) => f.depth === 0).w;
  for (const [k, l] of legend.entries()) {
    const m = /^(\S+) (\S+) -> (\S+) \(([+-][0-9.]+) pp\)$/.exec(l.text);
    check(m, `diff legend row "${l.text}" is not "NAME A% -> B% (+x pp)"`);
    let w = 0;
    for (const f of fr) if (f.cat === l.cat) w += own.get(f);
    eq(m[3], share1(w, total), `B share of ${l.cat} vs the drawn width`);
    await page.locator('#legend > g').nth(k).click();
    eq(await textOf(page, '#matched'), `Matched: ${m[3]}`, `Matched after clicking ${l.cat} on the diff`);
    check((await frames(page)).some((f) => f.fill === HIGHLIGHT) === (fr.some((f) => f.cat === l.cat)), `${l.cat}: highlight`);
  }
  const f = fr.find((x) => x.cat === 'gemm');
  check(f && /category gemm/.test(f.title), 'diff tooltips do not name the category');
  check(/ pp/.test(f.title) && !/ pts/.test(f.title), `diff tooltip wording: ${f.title}`);
  await shot(page, 'diff-categories.png');
  noErrors(page, 'diff legend');
  await page.close();
});

// Header and footer texts must neither overlap nor leave the image at any
// font size from 10 to 16 and any width from 800 to 2400, with the longest
// texts they can hold (Reset Search, Matched while zoomed, a long hover).
test('layout: nothing overlaps or is clipped at font sizes 10-16 and widths 800-2400', async () => {
  const title = 'libtorch training loop, 2 threads, DWARF unwinding, all CPUs, with a long title that must be cut short';
  const files = [];
  for (const fs_ of [10, 12, 14, 16]) for (const width of [800, 1200, 1600, 2400]) {
    const cat = art(`layout-${fs_}-${width}.svg`);
    fgtool(['svg', '--colors', 'category', '--font-size', String(fs_), '--width', String(width), '--title', title,
            '--subtitle', 'cpu-clock at 999 Hz; command ./train --threads 2; duration 12.3 s', mainFolded, '-o', cat]);
    const diff = art(`layout-diff-${fs_}-${width}.svg`);
    fgtool(['diff', '--by', 'category', '--font-size', String(fs_), '--width', String(width),
            testdata('categories', 'libtorch_fp.folded'), mainFolded, '-o', diff]);
    files.push([cat, fs_, width], [diff, fs_, width]);
  }
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  for (const [file, fs_, width] of files) {
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    // Zoom into a deep frame, search, hover the widest leaf-side frame.
    const fr = withPaths(await frames(page));
    const z = fr.filter((f) => f.depth === 3).sort((x, y) => y.w - x.w)[0];
    await page.click(`#frames > g:nth-child(${z.i + 1})`);
    await page.evaluate(() => search('.'));
    const deep = fr.filter((f) => isAncestor(z, f)).sort((x, y) => y.name.length - x.name.length)[0];
    await page.evaluate((i) => {
      const g = document.getElementById('frames').children[i];
      g.querySelector('rect').dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    }, (deep || z).i);
    const boxes = await page.evaluate(() => {
      const box = (e, what) => { const b = e.getBBox(); return { what, x: b.x, y: b.y, w: b.width, h: b.height }; };
      const out = [];
      for (const id of ['title', 'subtitle', 'unzoom', 'search', 'ignorecase', 'matched', 'details']) {
        const e = document.getElementById(id);
        if (e && e.textContent.trim()) out.push(box(e, '#' + id));
      }
      for (const g of document.querySelectorAll('#legend > g')) out.push(box(g, 'legend ' + g.getAttribute('fg:cat')));
      for (const t of document.querySelectorAll('#legend > text')) out.push(box(t, 'legend label ' + t.textContent));
      let top = Infinity;
      for (const g of document.getElementById('frames').children)
        if (getComputedStyle(g).display !== 'none') top = Math.min(top, g.querySelector('rect').getBBox().y);
      const vb = document.documentElement.viewBox.baseVal;
      return { out, top, W: vb.width, H: vb.height, matched: document.getElementById('matched').textContent };
    });
    const where = `${path.basename(file)} (font ${fs_}, width ${width})`;
    check(/of zoomed/.test(boxes.matched), `${where}: Matched text while zoomed: ${boxes.matched}`);
    for (const b of boxes.out) {
      check(b.x >= -0.5 && b.y >= -0.5 && b.x + b.w <= boxes.W + 0.5 && b.y + b.h <= boxes.H + 0.5,
            `${where}: ${b.what} is clipped: ${JSON.stringify(b)} in ${boxes.W}x${boxes.H}`);
      const footer = b.what === '#matched' || b.what === '#details';
      if (!footer) check(b.y + b.h <= boxes.top + 0.5, `${where}: ${b.what} runs into the frames (top ${boxes.top}): ${JSON.stringify(b)}`);
    }
    for (let i = 0; i < boxes.out.length; i++) for (let j = i + 1; j < boxes.out.length; j++) {
      const p = boxes.out[i], q = boxes.out[j];
      const overlap = p.x < q.x + q.w - 0.5 && q.x < p.x + p.w - 0.5 && p.y < q.y + q.h - 0.5 && q.y < p.y + p.h - 0.5;
      check(!overlap, `${where}: ${p.what} ${JSON.stringify(p)} overlaps ${q.what} ${JSON.stringify(q)}`);
    }
    if (fs_ === 16 && width === 800) await shot(page, `layout-${path.basename(file, '.svg')}.png`);
    await page.setViewportSize({ width: 1200, height: 800 });
  }
  check(page.errors.length === 0, `layout: page errors: ${page.errors.join(' | ')}`);
  await page.close();
});

test('--fluid: width 100% with a viewBox, script still zooms', async () => {
  const svgFile = art('fluid.svg');
  fgtool(['svg', '--fluid', mainFolded, '-o', svgFile]);
  const page = await openSvg(svgFile);
  const attrs = await page.evaluate(() => [document.documentElement.getAttribute('width'), document.documentElement.getAttribute('viewBox')]);
  eq(attrs[0], '100%', 'fluid SVG width');
  check(/^0 0 1200 /.test(attrs[1]), `fluid SVG viewBox: ${attrs[1]}`);
  const fr = withPaths(await frames(page));
  const z = pickZoomTarget(fr, 4);
  await page.click(`#frames > g:nth-child(${z.i + 1})`);
  near(Number((await frames(page))[z.i].rw), 1180, 0.05, 'zoomed width in viewBox units');
  noErrors(page, 'fluid');
  await page.close();
});

test('diff: grown frame red, shrunk frame blue, tooltips with both counts', async () => {
  // A = a real profile; B = A with one subtree x4 and another /4 (the two
  // heaviest at depth 4: disjoint, as they are on the same level).
  const a = mainStacks;
  const ta = mainTree;
  const level2 = [];
  for (const [n, d] of walk(ta)) if (d === 4) level2.push(n);
  level2.sort((p, q) => q.total - p.total);
  const [grow, shrink] = level2;
  check(grow && shrink, 'fewer than two subtrees at depth 4');
  const under = (s, n) => n.path.every((f, i) => s.frames[i] === f);
  const b = a.map((s) => ({ frames: s.frames, weight: under(s, grow) ? s.weight * 4 : under(s, shrink) ? Math.round(s.weight / 4) : s.weight }))
             .filter((s) => s.weight > 0);
  const aFile = art('diff-a.folded'), bFile = art('diff-b.folded'), svgFile = art('diff.svg');
  writeFolded(aFile, a);
  writeFolded(bFile, b);
  fgtool(['diff', aFile, bFile, '-o', svgFile]);
  const tb = buildTree(b);
  // The heaviest self frame inside each subtree: its own share changed most.
  const heaviestSelf = (root) => { let best = null; for (const [n] of walk(root)) if (!best || n.self > best.self) best = n; return best; };
  const g = heaviestSelf(findPath(tb, grow.path)), s = heaviestSelf(findPath(ta, shrink.path));
  const page = await openSvg(svgFile);
  noErrors(page, 'diff.svg');
  const fr = withPaths(await frames(page));
  const byPath = new Map(fr.map((f) => [pathKey(f.path), f]));
  for (const [node, colour] of [[g, 'red'], [s, 'blue']]) {
    const f = byPath.get(pathKey(node.path));
    check(f, `${node.path.join(';')} not drawn in the diff`);
    const [r, gg, bb] = rgb(f.fill) || [];
    if (colour === 'red') check(r === 255 && gg === bb && gg < 200, `${node.name} should be red, is ${f.fill}`);
    else check(bb === 255 && r === gg && r < 200, `${node.name} should be blue, is ${f.fill}`);
    const na = findPath(ta, node.path), nb = findPath(tb, node.path);
    await page.hover(`#frames > g:nth-child(${f.i + 1})`);
    const details = await textOf(page, '#details');
    const wantA = `A ${formatCount(na ? na.total : 0)} samples ${pct2(na ? na.total : 0, ta.total)}`;
    const wantB = `B ${formatCount(nb ? nb.total : 0)} samples ${pct2(nb ? nb.total : 0, tb.total)}`;
    check(details.includes(wantA) && details.includes(wantB), `diff tooltip of ${node.name}: "${details}" lacks "${wantA}" / "${wantB}"`);
  }
  // An untouched subtree keeps both counts equal.
  const same = level2.find((n) => n !== grow && n !== shrink && byPath.has(pathKey(n.path)));
  if (same) {
    const f = byPath.get(pathKey(same.path));
    check(f.title.includes(`A ${formatCount(same.total)} samples`) && f.title.includes(`B ${formatCount(same.total)} samples`),
          `unchanged ${same.name}: ${f.title}`);
  }
  await page.hover(`#frames > g:nth-child(${byPath.get(pathKey(g.path)).i + 1})`);
  await shot(page, 'diff.png', 'flamegraph-diff.png');
  await page.close();
});

// ~100,000 drawn frames: groups of stacks at every level, deepest levels
// narrower than --minwidth's 0.1 px so that pruning is exercised too.
test('large profile (~100k frames) loads and zooms within seconds', async () => {
  const file = art('large.folded'), svgFile = art('large.svg');
  const groups = [40000, 12000, 4000, 1200, 400, 120, 48, 24, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12];
  const N = 120000, lines = [];
  const names = ['at::native::addmm_out', 'torch::autograd::Engine::evaluate_function', 'c10::impl::wrap_kernel',
                 'sgemm_kernel', 'at::_ops::linear::call', 'std::vector::push_back', 'dnnl::impl::cpu::x64::jit_conv'];
  for (let i = 0; i < N; i += 12) {
    const frames = ['python3'];
    groups.forEach((size, k) => { const id = Math.floor(i / size); frames.push(`${names[(id + k) % names.length]}_${k}_${id}`); });
    lines.push({ frames: [...frames, 'leaf_a', 'leaf_a2'], weight: 6 }, { frames: [...frames, 'leaf_b'], weight: 6 });
  }
  writeFolded(file, lines);
  let t = Date.now();
  fgtool(['svg', file, '-o', svgFile]);
  fs.rmSync(file);
  const genMs = Date.now() - t;
  t = Date.now();
  const page = await openSvg(svgFile);
  const loadMs = Date.now() - t;
  const count = await page.evaluate(() => document.getElementById('frames').children.length);
  check(count > 90000 && count < 130000, `large profile draws ${count} frames`);
  // The leaves (6 of 120,000 < 0.1 px) are pruned.
  check(!(await page.evaluate(() => document.getElementById('frames').textContent.includes('leaf_'))), 'leaves narrower than --minwidth drawn');
  const target = await page.evaluate(() => {
    const kids = document.getElementById('frames').children;
    for (let i = 0; i < kids.length; i++) if (kids[i].querySelector('title').textContent.includes('_3_1 ')) return i;
    return -1;
  });
  check(target >= 0, 'no frame at depth 4 found');
  t = Date.now();
  await page.click(`#frames > g:nth-child(${target + 1})`, { timeout: 30000 });
  await page.waitForFunction((i) => document.getElementById('frames').children[i].querySelector('rect').getAttribute('width') === '1180.0',
                             target, { timeout: 30000 });
  const zoomMs = Date.now() - t;
  t = Date.now();
  await page.click('#unzoom');
  await page.waitForSelector('#unzoom.hide', { state: 'attached', timeout: 30000 });
  const unzoomMs = Date.now() - t;
  console.log(`    large: ${count} frames, ${(fs.statSync(svgFile).size / 1e6).toFixed(1)} MB SVG; fgtool svg ${genMs} ms, ` +
              `load ${loadMs} ms, zoom ${zoomMs} ms, reset ${unzoomMs} ms`);
  // On an idle 2-core machine: load ~4 s, zoom and reset ~1 s. The limits
  // leave room for a loaded machine and still catch anything quadratic.
  check(loadMs < 40000, `load took ${loadMs} ms`);
  check(zoomMs < 10000, `zoom took ${zoomMs} ms`);
  check(unzoomMs < 10000, `reset zoom took ${unzoomMs} ms`);
  noErrors(page, 'large.svg');
  await page.close();
});

// ---------------------------------------------------------------- runner
const only = opt.only ? opt.only.split(',') : null;
let failed = 0, ran = 0;
const t0 = Date.now();
for (const { name, fn } of tests) {
  if (only && !only.some((o) => name.startsWith(o))) continue;
  const t = Date.now();
  ran++;
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name} (${Date.now() - t} ms)\n    ${e instanceof Failure ? e.message : e.stack}`);
  }
}
await context.close();
fs.rmSync(userDataDir, { recursive: true, force: true });
console.log(`browser tests: ${ran - failed}/${ran} passed in ${((Date.now() - t0) / 1000).toFixed(1)} s; artifacts in ${opt.artifacts}`);
process.exit(failed ? 1 : 0);
