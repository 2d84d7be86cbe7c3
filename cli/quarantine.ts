/**
 * `tool-audit quarantine list|show|replay`: what was quarantined, one packet with its exact
 * bytes and replays, and replay (stored bytes or the producer's corrected packets) through a
 * running server's pipeline. list/show read ClickHouse directly or a server (--url /
 * TOOL_AUDIT_URL) like `task`; replay always asks the server (its pipeline must judge the
 * packets, and the embedded database belongs to it).
 */
import { readFileSync } from 'node:fs';
import { plainListQuery, windowOf } from '../api/read-params.ts';
import { AppError } from '../platform/errors.ts';
import type { QuarantineList, QuarantineRecord, ReplayAnswer } from '../queries/quarantine-schemas.ts';
import { replayAnswerSchema } from '../queries/quarantine-schemas.ts';
import { configOrExit } from './runtime.ts';
import { openReadQueries, parseArgs } from './task.ts';
import { USAGES } from './usage.ts';


/** One line per quarantined packet. Pure. */
export function renderQuarantineList(list: QuarantineList): string {
  const lines = list.records.map((r) => {
    const replays = r.replays.length ? ` replays:${r.replays.map((x) => x.outcome).join(',')}` : '';
    return `${r.received_at}  ${r.reason.code.padEnd(20)} ${(r.packet_type ?? '-').padEnd(15)} ${r.quarantine_id}  ${r.ids.join(',') || '-'}${replays}`;
  });
  const counts = Object.entries(list.counts).map(([k, n]) => `${k}=${n}`).join(' ');
  return [...lines, `counts: ${counts || 'none'}${list.next_cursor ? `  (more: --cursor ${list.next_cursor})` : ''}`].join('\n');
}

/** One packet in full. Pure. */
export function renderQuarantineRecord(r: QuarantineRecord): string {
  const src = r.source.kind === 'kafka' ? `kafka ${r.source.topic}/${r.source.partition}@${r.source.offset}` : 'http';
  return [
    `${r.quarantine_id}  received ${r.received_at}  via ${src}${r.source.request_id ? ` (request ${r.source.request_id})` : ''}`,
    `reason: ${r.reason.code}: ${r.reason.message}`,
    `packet: ${r.packet_type ?? '-'} ${r.ids.join(' ')}`,
    `raw (${r.raw_encoding}): ${r.raw_encoding === 'none' ? '(the Kafka record had no value)' : r.raw}`,
    ...r.replays.map((x) => `replay ${x.replay_id} at ${x.replayed_at} by ${x.key_id}${x.corrected ? ' (corrected)' : ''}: ${x.outcome}${x.reason ? ` ${x.reason.code}: ${x.reason.message}` : ''}`),
  ].join('\n');
}

const filterFlags = (flags: Record<string, string>) => ({
  ...(flags.reason ? { reason: flags.reason } : {}),
  ...(flags.source ? { source: flags.source } : {}),
  ...(flags['packet-type'] ? { packet_type: flags['packet-type'] } : {}),
});

/** `tool-audit quarantine …`. */
export async function quarantine(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { flags, positional } = parseArgs(rest);
  if (sub === 'list') return list(flags);
  if (sub === 'show' && positional[0]) return show(positional[0], flags);
  if (sub === 'replay' && (positional.length || flags.filter)) return replay(rest, flags, positional);
  process.stderr.write(`${USAGES.quarantine}\n`);
  process.exit(2);
}

async function list(flags: Record<string, string>): Promise<void> {
  const config = configOrExit();
  const parsed = plainListQuery.safeParse(Object.fromEntries(Object.entries(flags).filter(([k]) => ['from', 'to', 'limit', 'cursor'].includes(k))));
  if (!parsed.success) throw new AppError('CONFIG_INVALID', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), { retryable: false });
  const window = windowOf(parsed.data, { windowDays: config.queries.defaultWindowDays, expensiveThresholdUsd: 0, slowThresholdMs: 0 });
  const f = filterFlags(flags);
  const { queries, close } = await openReadQueries(flags);
  try {
    const page = await queries.quarantine({
      window,
      limit: parsed.data.limit ?? 100,
      ...(parsed.data.cursor ? { cursor: parsed.data.cursor } : {}),
      ...(f.reason ? { reason: f.reason } : {}),
      ...(f.source ? { source: f.source } : {}),
      ...(f.packet_type ? { packetType: f.packet_type } : {}),
    });
    process.stdout.write(`${flags.json ? JSON.stringify(page, null, 2) : renderQuarantineList(page)}\n`);
  } finally {
    await close();
  }
}

async function show(id: string, flags: Record<string, string>): Promise<void> {
  const { queries, close } = await openReadQueries(flags);
  try {
    const found = await queries.quarantineRecord({ quarantineId: id });
    if (!found) throw new AppError('SERVER_REFUSED', `no quarantined packet ${id}`, { retryable: false });
    const r = found.record;
    if (flags.raw) process.stdout.write(r.raw_encoding === 'base64' ? Buffer.from(r.raw, 'base64') : r.raw);
    else process.stdout.write(`${flags.json ? JSON.stringify(found, null, 2) : renderQuarantineRecord(r)}\n`);
  } finally {
    await close();
  }
}

/** Every value of a repeatable flag, in order. */
function repeated(argv: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) if (argv[i] === `--${name}` && argv[i + 1] !== undefined) out.push(argv[++i] as string);
  return out;
}

async function replay(argv: string[], flags: Record<string, string>, ids: string[]): Promise<void> {
  const config = configOrExit();
  const url = (flags.url ?? config.client.url ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const packets = repeated(argv, 'packet').map((file) => readFileSync(file, 'utf8').trim());
  const limit = flags.limit ? Number(flags.limit) : undefined;
  const body = flags.filter
    ? { filter: { ...filterFlags(flags), ...(flags.from ? { from: flags.from } : {}), ...(flags.to ? { to: flags.to } : {}), ...(limit ? { limit } : {}), ...(flags.cursor ? { cursor: flags.cursor } : {}) } }
    : { ids, ...(packets.length ? { packets } : {}) };
  let res: Response;
  try {
    res = await fetch(`${url}/v1/quarantine/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(config.client.apiKey ? { authorization: `Bearer ${config.client.apiKey}` } : {}) },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new AppError('SERVER_UNAVAILABLE', `POST ${url}/v1/quarantine/replay failed: ${(err as Error).message}`, { retryable: true, cause: err });
  }
  const text = await res.text();
  if (!res.ok) throw new AppError('SERVER_REFUSED', `replay answered ${res.status}: ${text.slice(0, 500)}`, { retryable: false });
  const answer: ReplayAnswer = replayAnswerSchema.parse(JSON.parse(text));
  if (flags.json) return void process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  const lines = answer.results.map((r) => `${r.quarantine_id}: ${r.status}${r.corrected ? ' (corrected)' : ''}${r.reason ? ` ${r.reason.code}: ${r.reason.message}` : ''}`);
  const note = answer.mode === 'kafka' ? ' (Kafka mode: accepted = in Kafka; the worker records the final outcome in `quarantine show`)' : '';
  process.stdout.write(
    `${[...lines, `replay ${answer.replay_id}: accepted ${answer.accepted}, duplicates ${answer.duplicates}, rejected ${answer.rejected}${note}${answer.next_cursor ? `; more match: repeat with the filter's cursor ${answer.next_cursor}` : ''}`].join('\n')}\n`,
  );
}
