#!/usr/bin/env node
/**
 * Self time of a V8 CPU profile (`.cpuprofile`, from `--cpu-prof`, `npm run bench -- --profile` or
 * bench/profile-routes.mjs) summed per function and per file or package (issue 22, brief 22n): where a route's Node
 * time goes, and, given a second profile, how it differs from another route's.
 *
 *   node bench/cpu-profile-summary.mjs A.cpuprofile [--requests N] [--top 40]
 *        [--base B.cpuprofile --base-requests M] [--inclusive 'name,name'] [--from S --to S]
 *
 * `--requests`: the requests the profile served; figures are then µs per request (else ms in all). `--base`: a
 * second profile (e.g. the `ceiling` or the plain `list`) whose per-request figures are subtracted, largest
 * differences first. `--inclusive`: also the time with each named function on the stack (its callees included; a
 * sample is counted once per name). `--from`/`--to`: only samples in that window (seconds from the profile's start).
 * Files are grouped as `pkg:<package>` (node_modules), `app:<path>` (dist/src), `node:<module>` (Node's own
 * JavaScript) and `(native)` for V8 and C++ frames without a script; `(garbage collector)`, `(program)` and `(idle)`
 * are V8's own nodes. `--callers NAME`: the stacks (three frames up) under which NAME's self time was spent.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: 'string' },
    base: { type: 'string' },
    'base-requests': { type: 'string' },
    top: { type: 'string', default: '40' },
    inclusive: { type: 'string' },
    callers: { type: 'string' },
    depth: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: cpu-profile-summary.mjs PROFILE [--requests N] [--base PROFILE]\n');
  process.exit(2);
}

/** The package or file a script URL belongs to. */
export function fileGroup(url) {
  if (!url) return '(native)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return `pkg:${parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const app = url.indexOf('/dist/src/');
  if (app >= 0) return `app:${url.slice(app + '/dist/src/'.length)}`;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '');
}

/** Self and inclusive times (ms) of one profile, optionally within a window. */
function summarise(path, inclusiveNames) {
  const profile = JSON.parse(readFileSync(path, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const from = values.from === undefined ? -Infinity : Number(values.from) * 1e6;
  const to = values.to === undefined ? Infinity : Number(values.to) * 1e6;
  const byFunction = new Map();
  const byFile = new Map();
  const inclusive = new Map(inclusiveNames.map((name) => [name, 0]));
  const callers = new Map();
  let total = 0;
  let idle = 0;
  let at = 0;
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
  for (let i = 0; i < profile.samples.length; i += 1) {
    // A sample's time is the delta to the next sample (V8's convention in DevTools).
    at += profile.timeDeltas[i];
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (at < from || at > to) continue;
    const node = nodes.get(profile.samples[i]);
    const frame = node.callFrame;
    const name = frame.functionName || '(anonymous)';
    // Idle is not CPU: counted apart.
    if (name === '(idle)') {
      idle += us;
      continue;
    }
    const group = frame.url ? fileGroup(frame.url) : name.startsWith('(') ? name : '(native)';
    add(byFunction, `${name}  ${group}${frame.url ? `:${frame.lineNumber + 1}` : ''}`, us);
    add(byFile, group, us);
    total += us;
    if (name === values.callers) {
      const chain = [];
      for (
        let id = parent.get(node.id);
        id !== undefined && chain.length < Number(values.depth ?? 3);
        id = parent.get(id)
      ) {
        const f = nodes.get(id).callFrame;
        chain.push(`${f.functionName || '(anonymous)'} ${fileGroup(f.url)}:${f.lineNumber + 1}`);
      }
      add(callers, chain.join(' < '), us);
    }
    if (inclusive.size) {
      const seen = new Set();
      for (let id = node.id; id !== undefined; id = parent.get(id)) {
        const fn = nodes.get(id).callFrame.functionName;
        if (inclusive.has(fn) && !seen.has(fn)) {
          seen.add(fn);
          inclusive.set(fn, inclusive.get(fn) + us);
        }
      }
    }
  }
  const ms = (map) => new Map([...map].map(([key, us]) => [key, us / 1000]));
  return {
    total: total / 1000,
    idle: idle / 1000,
    byFunction: ms(byFunction),
    byFile: ms(byFile),
    inclusive: ms(inclusive),
    callers: ms(callers),
  };
}

const names = values.inclusive ? values.inclusive.split(',') : [];
const main = summarise(positionals[0], names);
const scale = values.requests ? 1000 / Number(values.requests) : 1;
const base = values.base ? summarise(values.base, names) : null;
const baseScale = values['base-requests'] ? 1000 / Number(values['base-requests']) : 1;
const unit = values.requests ? 'µs/req' : 'ms';
const top = Number(values.top);

function table(title, a, b) {
  const keys = new Set([...a.keys(), ...(b ? b.keys() : [])]);
  const rows = [...keys].map((key) => {
    const value = (a.get(key) ?? 0) * scale;
    const other = b ? (b.get(key) ?? 0) * baseScale : 0;
    return { key, value, other, diff: value - other };
  });
  rows.sort((x, y) => (b ? y.diff - x.diff : y.value - x.value));
  console.log(`\n${title} (${unit}${b ? ', this / base / difference' : ''}):`);
  for (const row of rows.slice(0, top))
    console.log(
      `${row.value.toFixed(2).padStart(10)}${b ? `${row.other.toFixed(2).padStart(10)}${row.diff.toFixed(2).padStart(10)}` : ''}  ${row.key}`,
    );
}

console.log(
  `total sampled: ${(main.total * scale).toFixed(2)} ${unit}` +
    (base ? ` (base ${(base.total * baseScale).toFixed(2)})` : '') +
    `; idle ${main.idle.toFixed(0)} ms`,
);
table('per file or package', main.byFile, base?.byFile);
table('per function', main.byFunction, base?.byFunction);
if (names.length) table('inclusive', main.inclusive, base?.inclusive);
if (values.callers) table(`callers of ${values.callers}`, main.callers, base?.callers);
