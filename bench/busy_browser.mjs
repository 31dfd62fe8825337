// Chromium part of bench/busy_machine.sh's load (its default, --browser persistent):
// one headless Chromium that stays up (as a person's browser does) and keeps
// rendering the SVGs it is given: load, search, zoom into a frame, reset,
// screenshot, next. Its renderer's JIT code (the SVGs' script) and its
// threads are recorded without a browser launch every few seconds, which
// --browser relaunch does (and which makes most of that
// recording's processes and MMAP2 records).
//   node bench/busy_browser.mjs SECONDS CHROMIUM SCREENSHOT SVG...
// playwright-core comes from tests/browser (scripts/setup.sh --bench or --browser).
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [secondsArg, chromiumPath, shot, ...svgs] = process.argv.slice(2);
const seconds = Number(secondsArg || 20);
if (!svgs.length) {
  console.error('busy_browser.mjs: no SVGs given');
  process.exit(2);
}
const pw = path.join(here, '..', 'tests', 'browser', 'node_modules', 'playwright-core', 'index.mjs');
if (!fs.existsSync(pw)) {
  console.error(`busy_browser.mjs: ${pw} not found (scripts/setup.sh --bench installs it)`);
  process.exit(2);
}
const { chromium } = await import(pathToFileURL(pw).href);
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fgtool-busy-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: chromiumPath,
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--no-first-run', '--disable-sync', '--disable-dev-shm-usage'],
});
const page = context.pages()[0] || (await context.newPage());
const end = Date.now() + seconds * 1000;
let round = 0;
try {
  while (Date.now() < end) {
    const svg = svgs[round++ % svgs.length];
    await page.goto(pathToFileURL(svg).href);
    // The flamegraph's own script: search, then zoom into the widest frames
    // and back (each a re-layout of every frame's text), as a reader does.
    await page.evaluate(() => {
      const frames = Array.from(document.querySelectorAll('g')).filter((g) => g.querySelector('rect'));
      frames.sort((a, b) => Number(b.querySelector('rect').getAttribute('width')) -
                            Number(a.querySelector('rect').getAttribute('width')));
      for (const g of frames.slice(1, 6)) {
        g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
        g.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
      }
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    await page.screenshot({ path: shot });
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
