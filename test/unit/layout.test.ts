/**
 * The layout is the architecture: stages at the top level in the order a packet travels, each
 * importing only from itself, earlier stages and platform/ (what they all stand on); pure
 * folders import no I/O; ClickHouse has one door.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { filesUnder } from '../helpers/repo-files.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
// web/ (the browser pages and their serving) follows api/: it is a client of the read API and
// may use its types; dashboards/ needs neither, and cli/ wires both into `serve`.
const STAGES = ['schemas', 'emit', 'ingest', 'analyzers', 'queries', 'api', 'web', 'dashboards', 'cli'] as const;
const FOUNDATION = 'platform';

const sources = (dir: string): string[] => filesUnder(dir, /\.(ts|mjs)$/);

/** Every import of a file: the specifier and, for relative ones, the top folder it lands in. */
function importsOf(file: string, opts: { runtimeOnly?: boolean } = {}): Array<{ spec: string; top?: string; target?: string }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ spec: string; top?: string; target?: string }> = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)(\s+type\b)?[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    if (opts.runtimeOnly && m[1]) continue;
    const spec = (m[2] ?? m[3]) as string;
    if (!spec.startsWith('.')) {
      out.push({ spec });
      continue;
    }
    const target = relative(root, resolve(dirname(file), spec));
    out.push({ spec, top: target.split('/')[0], target });
  }
  return out;
}

/** Position in the pipeline: platform below every stage; anything else (test/, bench/) may never be imported. */
const rank = (top: string | undefined): number => {
  if (top === FOUNDATION) return -1;
  const i = STAGES.indexOf(top as (typeof STAGES)[number]);
  return i === -1 ? Number.POSITIVE_INFINITY : i;
};

describe('layout', () => {
  it('has the stages and the foundation at the top level, and no src/', () => {
    const top = readdirSync(root);
    for (const d of [...STAGES, FOUNDATION, 'test']) expect(top, d).toContain(d);
    expect(top).not.toContain('src');
  });

  it('no stage imports from a stage after it, and platform/ imports no stage', () => {
    const offences: string[] = [];
    for (const top of [FOUNDATION, ...STAGES]) {
      for (const file of sources(join(root, top))) {
        for (const imp of importsOf(file)) {
          if (imp.top === undefined) continue;
          const allowed = top === FOUNDATION ? imp.top === FOUNDATION : rank(imp.top) <= rank(top);
          if (!allowed) offences.push(`${relative(root, file)} → ${imp.target}`);
        }
      }
    }
    expect(offences).toEqual([]);
  });

  it('keeps contracts, packet judging, analyzer rules, query SQL and dashboard builders free of I/O and of the ClickHouse client', () => {
    const pure = [
      ...sources(join(root, 'schemas')),
      ...sources(join(root, 'queries')),
      ...sources(join(root, 'dashboards')),
      ...['ingest/verdict.ts', 'ingest/decode-packet.ts', 'ingest/decode-common.ts', 'ingest/decode-records.ts', 'ingest/packet-check.ts', 'ingest/rows.ts', 'ingest/row-lines.ts', 'ingest/line-join.ts', 'ingest/ports.ts'].map((f) => join(root, f)),
      ...['analyzers/pairs.ts', 'analyzers/data-flow.ts', 'analyzers/audit-rules.ts', 'analyzers/hint-rules.ts'].map((f) => join(root, f)),
    ];
    const IO = /^(node:(fs|net|http|https|child_process|worker_threads|dgram)|@clickhouse\/client|kafkajs|chdb|fastify)/;
    const DOOR = /^platform\/(clickhouse\/(door|client|migrate)|kafka\/)/;
    // Through every module a pure one loads at run time (type-only imports are erased), so that a
    // helper borrowed from a store cannot bring the door in by the back.
    const chains = new Map<string, string[] | null>();
    const ioChain = (rel: string): string[] | null => {
      if (chains.has(rel)) return chains.get(rel) ?? null;
      chains.set(rel, null);
      for (const i of importsOf(join(root, rel), { runtimeOnly: true })) {
        const chain = IO.test(i.spec) || (i.target !== undefined && DOOR.test(i.target)) ? [i.spec] : i.target !== undefined && /\.(ts|mjs)$/.test(i.target) ? ioChain(i.target) : null;
        if (chain) {
          chains.set(rel, [rel, ...chain]);
          return [rel, ...chain];
        }
      }
      return null;
    };
    const offences = pure.map((f) => ioChain(relative(root, f))).flatMap((c) => (c === null ? [] : [c.join(' → ')]));
    expect(offences).toEqual([]);
  });

  it('lets only the door module and the client factory touch @clickhouse/client at run time', () => {
    const offences: string[] = [];
    for (const top of [FOUNDATION, ...STAGES]) {
      for (const file of sources(join(root, top))) {
        const rel = relative(root, file);
        if (rel === 'platform/clickhouse/door.ts' || rel === 'platform/clickhouse/client.ts') continue;
        const text = readFileSync(file, 'utf8');
        // Types (settings) are fine; a value import would be a second door.
        if (/^import\s+(?!type\b)[^;]*from\s+['"]@clickhouse\/client['"]/m.test(text)) offences.push(rel);
      }
    }
    expect(offences).toEqual([]);
  });

  it('no module imports itself through a cycle of imports', () => {
    const graph = new Map<string, string[]>();
    for (const top of [FOUNDATION, ...STAGES]) {
      for (const file of sources(join(root, top))) {
        graph.set(
          relative(root, file),
          importsOf(file).flatMap((i) => (i.target !== undefined && /\.(ts|mjs)$/.test(i.target) ? [i.target] : [])),
        );
      }
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (node: string, path: string[]): void => {
      state.set(node, 'open');
      for (const next of graph.get(node) ?? []) {
        if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].join(' → '));
        else if (!state.has(next)) visit(next, [...path, next]);
      }
      state.set(node, 'done');
    };
    for (const node of graph.keys()) if (!state.has(node)) visit(node, [node]);
    expect(cycles).toEqual([]);
  });

  it('the server does not lean on the client SDK: only emit/ and cli/ (the MCP gateway) import emit/', () => {
    const offences: string[] = [];
    for (const top of STAGES.filter((t) => t !== 'emit' && t !== 'cli')) {
      for (const file of sources(join(root, top))) for (const imp of importsOf(file)) if (imp.top === 'emit') offences.push(`${relative(root, file)} → ${imp.target}`);
    }
    expect(offences).toEqual([]);
  });

  it('ships every stage and the foundation in the image', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    for (const d of [...STAGES, FOUNDATION]) expect(dockerfile, d).toMatch(new RegExp(`^COPY ${d} \\./${d}$`, 'm'));
  });

  it('declares no Error class but AppError, outside the emitter SDK\'s public errors and the browser\'s', () => {
    // The emitter's DeliveryError, BudgetDeniedError and EmitterTimeoutError are caught by class in
    // users' code; the pages' ApiError lives in the browser bundle. Everything else throws AppError
    // with a code (platform/errors.ts), mapped once at each edge.
    const allowed = new Set(['platform/errors.ts', 'emit/transport.ts', 'emit/budget.ts', 'emit/emitter.ts', 'web/app/api.ts']);
    const offences = [...STAGES, FOUNDATION]
      .flatMap((d) => sources(join(root, d)))
      .map((f) => relative(root, f))
      .filter((f) => !allowed.has(f) && /\bclass\s+\w+\s+extends\s+\w*Error\b/.test(readFileSync(join(root, f), 'utf8')));
    expect(offences).toEqual([]);
  });

  it('names no tracker issue in a tracked file: a reader of the repository has no tracker, the text says the reason', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter((f) => f && !/\.(png|jpe?g|parquet|gz|tgz|ico)$/.test(f));
    // Built from parts, so this file does not name one itself.
    const mention = new RegExp(['[Ii]ssues?', '[0-9]+'].join(' '));
    const offences = files.filter((f) => {
      try {
        return mention.test(readFileSync(join(root, f), 'utf8'));
      } catch {
        return false; // listed but gone from the work tree
      }
    });
    expect(offences).toEqual([]);
  });

  it('keeps at most five source files over 300 lines, each named with its reason in docs/development.md', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n');
    const source = tracked.filter((f) => /\.(ts|mjs|py|sh)$/.test(f) && !/^(test|bench)\//.test(f) && !f.endsWith('.d.ts'));
    const long = source.filter((f) => {
      try {
        return readFileSync(join(root, f), 'utf8').split('\n').length - 1 > 300;
      } catch {
        return false; // listed but gone from the work tree
      }
    });
    const doc = readFileSync(join(root, 'docs/development.md'), 'utf8');
    const named = [...doc.slice(doc.indexOf('## Large files')).matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect(long.length).toBeLessThanOrEqual(5);
    expect(long.filter((f) => !named.includes(f))).toEqual([]);
  });

  it('has no function over 80 lines in the TypeScript sources', () => {
    const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: root, encoding: 'utf8' }).split('\n').filter((f) => f && !/^(test|bench)\//.test(f) && !f.endsWith('.d.ts'));
    const offences: string[] = [];
    for (const f of files) {
      const file = ts.createSourceFile(f, readFileSync(join(root, f), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) || ts.isGetAccessor(n)) {
          const first = file.getLineAndCharacterOfPosition(n.getStart(file)).line;
          const lines = file.getLineAndCharacterOfPosition(n.getEnd()).line - first + 1;
          if (lines > 80) offences.push(`${f}:${first + 1} (${lines} lines)`);
        }
        ts.forEachChild(n, visit);
      };
      visit(file);
    }
    expect(offences).toEqual([]);
  });
});
