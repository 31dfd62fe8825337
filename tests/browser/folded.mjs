// An independent reading of folded stacks for the browser tests: the expected
// counts, percentages and search matches are computed here from the .folded
// text, never taken from fgtool or from the SVG.
import fs from 'node:fs';

// Lines of "frame;frame;...;leaf COUNT" -> [{frames: [...], weight}].
export function readFolded(file) {
  const out = [];
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (!line.trim()) continue;
    const sp = line.lastIndexOf(' ');
    const weight = Number(line.slice(sp + 1));
    if (!(sp > 0) || !Number.isFinite(weight)) throw new Error(`${file}: bad folded line: ${line.slice(0, 80)}`);
    out.push({ frames: line.slice(0, sp).split(';'), weight });
  }
  return out;
}

export function writeFolded(file, stacks) {
  fs.writeFileSync(file, stacks.map((s) => `${s.frames.join(';')} ${s.weight}`).join('\n') + '\n');
}

// The merged call tree: node = {name, total, self, children: Map, path}.
export function buildTree(stacks) {
  const root = { name: 'all', total: 0, self: 0, children: new Map(), path: [] };
  for (const { frames, weight } of stacks) {
    root.total += weight;
    let n = root;
    for (const f of frames) {
      let c = n.children.get(f);
      if (!c) {
        c = { name: f, total: 0, self: 0, children: new Map(), path: [...n.path, f] };
        n.children.set(f, c);
      }
      c.total += weight;
      n = c;
    }
    n.self += weight;
  }
  return root;
}

export function* walk(node, depth = 0) {
  yield [node, depth];
  for (const c of node.children.values()) yield* walk(c, depth + 1);
}

export function findPath(root, path) {
  let n = root;
  for (const f of path) {
    n = n.children.get(f);
    if (!n) return null;
  }
  return n;
}

export const pathKey = (path) => path.join('\u0001');

// Share of the total covered by stacks with at least one frame matching
// `re`: a stack counts once however many of its frames match (nested hits).
export function matchedShare(stacks, re) {
  let hit = 0, total = 0;
  for (const { frames, weight } of stacks) {
    total += weight;
    if (frames.some((f) => re.test(f))) hit += weight;
  }
  return total > 0 ? hit / total : 0;
}

// 1234567 -> "1,234,567"; fractional counts with two decimals (as tooltips show them).
export function formatCount(v) {
  const integral = Math.abs(v - Math.round(v)) < 1e-9 * Math.max(1, Math.abs(v));
  const s = integral ? String(Math.round(v)) : v.toFixed(2);
  const [int, frac] = s.split('.');
  const neg = int.startsWith('-');
  const digits = neg ? int.slice(1) : int;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (neg ? '-' : '') + grouped + (frac !== undefined ? '.' + frac : '');
}
