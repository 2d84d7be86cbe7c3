/**
 * `tool-audit budgets apply FILE | list`: apply puts a budget set (a JSON array, see docs/manifests-budgets-hints.md
 * "Budgets") in force on a running server — PUT /v1/budgets with TOOL_AUDIT_API_KEY, which needs
 * the `admin` scope; the file is checked first and refused whole with every offence named. list
 * shows the budgets with their current-period figures (the server's, or ClickHouse's without
 * reservations, like `task`).
 */
import { readFileSync } from 'node:fs';
import { AppError } from '../platform/errors.ts';
import { parseBudgetSet, type BudgetList } from '../queries/budgets/schemas.ts';
import { configOrExit } from './runtime.ts';
import { openReadQueries, parseArgs } from './task.ts';
import { USAGES } from './usage.ts';


/** One line per budget. Pure. */
export function renderBudgetList(list: BudgetList): string {
  if (list.budgets.length === 0) return `no budgets${list.version === null ? ' (none applied yet)' : ` (version ${list.version})`}`;
  const scope = (s: BudgetList['budgets'][number]['scope']) => Object.entries(s).map(([k, v]) => `${k}=${v}`).join(',') || 'any';
  return [
    `version ${list.version}`,
    ...list.budgets.map((b) => `${b.budget_id.padEnd(24)} ${b.mode.padEnd(4)} ${b.period_key.padEnd(10)} spent ${b.spent_usd.toFixed(4)} + reserved ${b.reserved_usd.toFixed(4)} of ${b.limit_usd.toFixed(4)} USD (remaining ${b.remaining_usd.toFixed(4)})  ${scope(b.scope)}`),
  ].join('\n');
}

/** `tool-audit budgets …`. */
export async function budgets(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { flags, positional } = parseArgs(rest);
  if (sub === 'apply' && positional[0]) return apply(positional[0], flags);
  if (sub === 'list') return list(flags);
  process.stderr.write(`${USAGES.budgets}\n`);
  process.exit(2);
}

async function apply(file: string, flags: Record<string, string>): Promise<void> {
  const config = configOrExit();
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new AppError('CONFIG_INVALID', `${file}: ${(err as Error).message}`, { retryable: false });
  }
  const set = parseBudgetSet(value);
  if (!set.ok) throw new AppError('CONFIG_INVALID', `${file} was refused whole:\n  ${set.errors.join('\n  ')}`, { retryable: false });
  const url = (flags.url ?? config.client.url ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  let res: Response;
  try {
    res = await fetch(`${url}/v1/budgets`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(config.client.apiKey ? { authorization: `Bearer ${config.client.apiKey}` } : {}) },
      body: JSON.stringify(set.budgets),
    });
  } catch (err) {
    throw new AppError('SERVER_UNAVAILABLE', `PUT ${url}/v1/budgets failed: ${(err as Error).message}`, { retryable: true, cause: err });
  }
  const text = await res.text();
  if (res.status !== 200) throw new AppError('SERVER_REFUSED', `PUT ${url}/v1/budgets answered ${res.status}: ${text.slice(0, 2000)}`, { retryable: false });
  const answer = JSON.parse(text) as { version: number; budgets: number };
  process.stdout.write(flags.json ? `${text}\n` : `applied ${answer.budgets} budget(s) from ${file}: version ${answer.version}\n`);
}

async function list(flags: Record<string, string>): Promise<void> {
  const { queries, close } = await openReadQueries(flags);
  try {
    const l = await queries.budgets({});
    process.stdout.write(`${flags.json ? JSON.stringify(l, null, 2) : renderBudgetList(l)}\n`);
  } finally {
    await close();
  }
}
