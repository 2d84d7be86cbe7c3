/**
 * The documentation stays true: every relative link of README.md and docs/ resolves (file and,
 * for a Markdown target, the heading its #anchor names); every variable platform/config.ts
 * reads is documented exactly once (one table row); every path of /openapi.json is in
 * docs/api.md; and the README stays short.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../api/openapi.ts';
import { READ_ROUTES } from '../../api/read-route-table.ts';
import { CONFIG_VARIABLES } from '../../platform/config.ts';

const root = new URL('../../', import.meta.url).pathname;
const pages = ['README.md', 'bench/README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const text = (page: string) => readFileSync(join(root, page), 'utf8');

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(page: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text(page).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (m) out.add(anchorOf(m[1] as string));
  }
  return out;
}

/** Relative link targets of a page, outside code. */
function links(page: string): string[] {
  const body = text(page).replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...body.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((t) => !/^[a-z]+:/.test(t));
}

describe('documentation', () => {
  it('every relative link resolves, anchors included', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const target of links(page)) {
        const [file = '', anchor] = target.split('#');
        const path = file === '' ? join(root, page) : resolve(dirname(join(root, page)), file);
        if (!existsSync(path)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor && path.endsWith('.md') && path.startsWith(root) && !anchors(path.slice(root.length)).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every variable the config reads is documented exactly once', () => {
    const vars = [...CONFIG_VARIABLES];
    expect(vars.length).toBeGreaterThan(30);
    const rows = pages.flatMap((p) => [...text(p).matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1] as string));
    const count = (v: string) => rows.filter((r) => r === v).length;
    expect(vars.filter((v) => count(v) !== 1).map((v) => `${v}: ${count(v)} rows`)).toEqual([]);
  });

  it('every route of /openapi.json is in docs/api.md', () => {
    const doc = openApiDocument(READ_ROUTES, 'test') as { paths: Record<string, Record<string, unknown>> };
    // A route is documented where docs/api.md names its method and path on one line.
    const lines = text('docs/api.md').split('\n');
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => [m.toUpperCase(), path.replace(/\{[a-z_]+\}/g, '{')] as const));
    const missing = routes.filter(([method, path]) => !lines.some((l) => l.includes(method) && l.replace(/\{[a-z_]+\}/g, '{').includes(path))).map(([m, p]) => `${m} ${p}`);
    expect(missing).toEqual([]);
  });

  it('every bench script has a row in bench/README.md', () => {
    const scripts = Object.keys((JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts).filter((k) => k.startsWith('bench:'));
    const listed = new Set([...text('bench/README.md').matchAll(/^\| \[`npm run (bench:[\w-]+)`\]/gm)].map((m) => m[1]));
    expect(scripts.length).toBeGreaterThan(20);
    expect(scripts.filter((s) => !listed.has(s))).toEqual([]);
  });

  it('the README is a short entry point', () => {
    expect(text('README.md').split('\n').length).toBeLessThanOrEqual(200);
  });
});
