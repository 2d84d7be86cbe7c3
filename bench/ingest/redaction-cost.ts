/**
 * `npm run bench:redaction-cost`: what redaction adds to decoding one packet, measured in one
 * process. The packets are those bench:ingest sends (bench/ingest/ingest-workload.ts); each round decodes
 * all of them with decodeText as a decode thread does, once with the redactor a worker builds from
 * the default configuration and once without, the order alternating between rounds so that a
 * noisy machine weighs on both alike. Prints µs per packet of each (median of the rounds) and the
 * difference.
 *
 *   npm run bench:redaction-cost -- [--tool-calls 20000] [--rounds 9] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { decodeText } from '../../ingest/decode-packet.ts';
import { loadConfig } from '../../platform/config.ts';
import { Redactor, type RedactionPolicy } from '../../schemas/redaction-policy.ts';
import { utf8ByteLength } from '../../schemas/hashing.ts';
import { workload } from './ingest-workload.ts';
import { median } from '../stats.ts';

const { values: opt } = parseArgs({
  options: {
    'tool-calls': { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '9' },
    json: { type: 'string' },
  },
});
const N = Number(opt['tool-calls']);
const ROUNDS = Number(opt.rounds);
if (!(Number.isInteger(N) && N > 0 && Number.isInteger(ROUNDS) && ROUNDS > 0)) throw new Error('--tool-calls and --rounds must be whole numbers > 0');

// The policy as cli/redaction-key.ts resolves it from the default configuration (the key is the
// state folder's there: any key of its length costs the same).
const loaded = loadConfig({});
if (!loaded.ok) throw new Error(loaded.error);
const { config } = loaded;
const policy: RedactionPolicy = { key: 'a'.repeat(64), email: config.redaction.email, paths: config.redaction.paths, patterns: config.redaction.patterns };
const redactor = new Redactor(policy);
const maxBytes = config.ingest.maxPacketBytes;

const packets = [...workload({ toolCalls: N })].map((m) => ({ raw: m.value, bytes: utf8ByteLength(m.value) }));
const SOURCE = 'kafka:bench:0';

/**
 * One pass over every packet; returns µs per packet, of wall time and of the process's CPU time
 * (which another process taking the cores does not inflate; the JIT's and GC's threads count).
 */
function pass(r: Redactor | undefined): { wall: number; cpu: number } {
  let sink = 0;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (const p of packets) sink += decodeText(p.raw, p.bytes, SOURCE, maxBytes, 'utf8', r).ok ? 1 : 0;
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / packets.length;
  const c = process.cpuUsage(c0);
  if (sink < 0) console.log(sink);
  return { wall, cpu: (c.user + c.system) / packets.length };
}

// Warm-up: both paths compiled and the caches (field order, regexps) filled before timing.
pass(redactor);
pass(undefined);

const rounds: Array<{ with: { wall: number; cpu: number }; without: { wall: number; cpu: number } }> = [];
for (let i = 0; i < ROUNDS; i++) {
  if (i % 2 === 0) {
    const a = pass(redactor);
    rounds.push({ with: a, without: pass(undefined) });
  } else {
    const b = pass(undefined);
    rounds.push({ with: pass(redactor), without: b });
  }
}
const summary = (k: 'wall' | 'cpu') => ({
  withRedaction: median(rounds.map((r) => r.with[k])),
  withoutRedaction: median(rounds.map((r) => r.without[k])),
  extra: median(rounds.map((r) => r.with[k] - r.without[k])),
});
const result = { packets: packets.length, rounds: ROUNDS, cpu: summary('cpu'), wall: summary('wall') };
console.log(`${packets.length} packets (${N} tool calls), ${ROUNDS} interleaved rounds, median µs/packet:`);
console.log('                     CPU time   wall time');
const row = (name: string, k: 'withRedaction' | 'withoutRedaction' | 'extra') => console.log(`  ${name.padEnd(19)}${result.cpu[k].toFixed(2).padStart(8)}${result.wall[k].toFixed(2).padStart(12)}`);
row('with redaction', 'withRedaction');
row('without redaction', 'withoutRedaction');
row('extra', 'extra');
console.log(`  throughput ratio   ${(result.cpu.withoutRedaction / result.cpu.withRedaction).toFixed(3).padStart(8)}${(result.wall.withoutRedaction / result.wall.withRedaction).toFixed(3).padStart(12)}`);
if (opt.json) writeFileSync(opt.json, `${JSON.stringify(result, null, 2)}\n`);
