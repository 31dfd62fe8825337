// Node part of bench/busy_machine.sh's load: keeps V8 compiling fresh code
// (new Function per round, so the JIT keeps writing into anonymous executable
// memory and the recording has unnamed JIT frames, as perf sees a browser or
// a Node service) and runs a few deep-ish call chains through it.
// Runs for SECONDS (argv[2], default 20) and exits, so a loop around it makes
// a new process, and a new [perf-PID.map], every round.
'use strict';
const seconds = Number(process.argv[2] || 20);
const end = Date.now() + seconds * 1000;
let round = 0;
let sink = 0;

function makeKernel(k) {
  // A distinct body per round: V8 cannot reuse the compiled code.
  return new Function('a', 'n', `
    let s = ${k};
    for (let i = 0; i < n; i++) s = (s * 31 + a[i % a.length] + ${k % 97}) | 0;
    return s;`);
}
function nest(depth, fn, a) { return depth === 0 ? fn(a, 20000) : nest(depth - 1, fn, a) + 1; }

while (Date.now() < end) {
  const a = Array.from({ length: 512 }, (_, i) => (i * 2654435761) >>> 0);
  const fn = makeKernel(round++);
  for (let j = 0; j < 50; j++) sink ^= nest(8 + (j % 8), fn, a);
  const text = JSON.stringify(a.map((x) => ({ x, s: x.toString(36) })));
  sink ^= JSON.parse(text).length;
  sink ^= text.replace(/[aeiou]+/g, '_').length;
  a.sort((x, y) => (x % 1000) - (y % 1000));
}
if (sink === 42) console.log('');
