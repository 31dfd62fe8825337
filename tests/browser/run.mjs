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

test('category legend matches fgtool report --format json', async () => {
  const folded = mainFolded;
  const svgFile = art('categories.svg');
  const help = fgtool(['svg', '--help']);
  check(/--colors category|category/.test(help), 'fgtool svg --help does not mention --colors category');
  fgtool(['svg', '--colors', 'category', folded, '-o', svgFile]);
  const report = JSON.parse(fgtool(['report', '--format', 'json', folded]));
  const page = await openSvg(svgFile);
  noErrors(page, 'categories.svg');
  const legend = await page.evaluate(() => Array.from(document.querySelectorAll('#legend > g'), (g) => ({
    cat: g.getAttribute('fg:cat'), text: g.querySelector('text').textContent, fill: g.querySelector('rect').getAttribute('fill'),
  })));
  check(legend.length > 1, 'no legend');
  const pct1 = (w) => (100 * w / report.total).toFixed(1) + '%';
  const res = report.resource, other = res[res.length - 1];
  const wantRes = res.slice(0, -1).filter((r) => r.self > 0);
  // Phase rows read "NAME (phase) SHARE"; the category a row's click
  // searches (fg:cat) must be the frames' category, NAME.
  const isPhase = (l) => / \(phase\) /.test(l.text);
  const catOf = (l) => (isPhase(l) ? l.text.replace(/ \(phase\) .*$/, '') : l.cat);
  const gotRes = legend.filter((l) => !isPhase(l) && l.cat !== other.name);
  eq(gotRes.map((l) => l.cat).join(','), wantRes.map((r) => r.name).join(','), 'resource categories in the legend');
  for (const [i, r] of wantRes.entries()) {
    eq(gotRes[i].text, `${r.name} ${pct1(r.self)}`, `legend text of ${r.name}`);
    eq(gotRes[i].fill.toLowerCase(), r.color.toLowerCase(), `legend colour of ${r.name}`);
  }
  const last = legend[legend.length - 1];
  eq(last.text, `${other.name} ${pct1(other.self)}`, 'last legend row (other)');
  for (const l of legend.filter(isPhase)) {
    const name = catOf(l);
    const p = report.phase.find((q) => q.name === name);
    check(p, `legend phase ${name} not in the report`);
    eq(l.text, `${name} (phase) ${pct1(p.self)}`, `legend text of phase ${name}`);
    eq(l.fill.toLowerCase(), p.color.toLowerCase(), `legend colour of phase ${name}`);
  }
  // Every category a frame is coloured with is in the legend.
  const fr = await frames(page);
  const legendCats = new Set(legend.map(catOf));
  for (const c of new Set(fr.map((f) => f.cat).filter(Boolean)))
    check(legendCats.has(c), `frames of category ${c} but no legend row for it`);
  await shot(page, 'categories.png', 'flamegraph-categories.png');
  // Clicking a legend row searches its category: exactly its frames light up.
  for (const [k, l] of legend.entries()) {
    const cat = catOf(l);
    const want = fr.filter((f) => f.cat === cat).length;
    if (!want) continue;
    await page.locator('#legend > g').nth(k).click();
    const lit = (await frames(page)).filter((f) => f.fill === 'rgb(208,0,208)').length;
    eq(lit, want, `frames lit by clicking legend row "${l.cat}"`);
  }
  noErrors(page, 'legend');
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
