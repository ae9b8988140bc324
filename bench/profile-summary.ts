// Summarises a .cpuprofile: self time per function and per file (or package), in µs per cycle.
// `node --import tsx bench/profile-summary.ts <file.cpuprofile> <cycles> <from µs> <to µs> [top]`, the
// numbers from bench/profile-relay.ts's WINDOW line: only samples inside the window count.
import { readFileSync } from 'node:fs';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
const [file, cyclesArg, fromArg, toArg, topArg] = process.argv.slice(2);
if (!file || !cyclesArg || !toArg) throw new Error('usage: profile-summary <file.cpuprofile> <cycles> <from µs> <to µs> [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };
const cycles = Number(cyclesArg);
const top = Number(topArg ?? 40);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
const from = Number(fromArg);
const to = Number(toArg);
let t = profile.startTime;
profile.samples.forEach((id, i) => {
  t += profile.timeDeltas[i] ?? 0;
  const next = profile.timeDeltas[i + 1] ?? 0; // a sample's time runs until the next one
  if (t >= from && t < to) self.set(id, (self.get(id) ?? 0) + next);
});

function where(url: string): string {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const src = url.indexOf('/src/');
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '').replace(/^node:/, 'node:');
}
const fns = new Map<string, number>();
const files = new Map<string, number>();
let total = 0;
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const f = `${n.callFrame.functionName || '(anon)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  fns.set(f, (fns.get(f) ?? 0) + us);
  const w = where(n.callFrame.url);
  files.set(w, (files.get(w) ?? 0) + us);
  total += us;
}
const idle = [...fns].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
const fmt = (us: number) => (us / cycles).toFixed(1).padStart(8);
console.log(`samples ${profile.samples.length}, busy ${((total - idle) / 1000).toFixed(0)} ms, ${cycles} cycles: ${((total - idle) / cycles).toFixed(0)} µs busy per cycle`);
console.log('\n-- by file/package (µs per cycle)');
for (const [k, v] of [...files].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(v)}  ${k}`);
console.log('\n-- by function (µs per cycle)');
for (const [k, v] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(v)}  ${k}`);

// Inclusive time of functions in src/ (the caller chain), to see what each of ours costs in total.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map<string, number>();
for (const [id, us] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    if (!n.callFrame.url.includes('/src/') && !process.env.ALL_INCL) continue;
    const k = `${n.callFrame.functionName || '(anon)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + us);
  }
}
console.log('\n-- inclusive, our functions (µs per cycle)');
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(v)}  ${k}`);
