/**
 * Builds the web app into static files (web/dist: index.html, app.js, app.css, manifest.json)
 * with esbuild: one minified ES module with Chart.js inside (no CDN, no fonts: works offline),
 * and a content hash that versions the asset URLs. `npm run build:web` and `npm test` build it;
 * `serve` builds it at start when it is missing or older than its sources (a clean clone's first
 * `npm start`). Run directly: `tsx web/build.ts`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Where the sources are. */
export const WEB_SOURCE_DIR = fileURLToPath(new URL('./app/', import.meta.url));
/** Where the bundle goes (never committed). */
export const WEB_DIST_DIR = fileURLToPath(new URL('./dist/', import.meta.url));

/** What a build wrote. */
export interface WebManifest {
  version: string;
  builtAt: string;
  bytes: { js: number; css: number };
}

/** Bundles the app into `outDir`. */
export async function buildWebBundle(outDir = WEB_DIST_DIR): Promise<WebManifest> {
  const result = await build({
    entryPoints: [join(WEB_SOURCE_DIR, 'main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    legalComments: 'linked',
    write: false,
    outfile: join(outDir, 'app.js'),
    logLevel: 'silent',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('app.js'));
  if (!js) throw new Error('esbuild wrote no app.js');
  const css = readFileSync(join(WEB_SOURCE_DIR, 'styles.css'));
  const version = createHash('sha256').update(js.contents).update(css).digest('hex').slice(0, 12);
  mkdirSync(outDir, { recursive: true });
  for (const f of result.outputFiles) writeFileSync(f.path, f.contents);
  writeFileSync(join(outDir, 'app.css'), css);
  writeFileSync(join(outDir, 'index.html'), readFileSync(join(WEB_SOURCE_DIR, 'index.html'), 'utf8').replaceAll('__VERSION__', version));
  const manifest: WebManifest = { version, builtAt: new Date().toISOString(), bytes: { js: js.contents.length, css: css.length } };
  writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

function newestSource(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir).map((name) => {
      const p = join(dir, name);
      const s = statSync(p);
      return s.isDirectory() ? newestSource(p) : s.mtimeMs;
    }),
  );
}

/** True when the bundle is missing or older than a source file. */
export function webBundleStale(outDir = WEB_DIST_DIR): boolean {
  try {
    return statSync(join(outDir, 'manifest.json')).mtimeMs < newestSource(WEB_SOURCE_DIR);
  } catch {
    return true;
  }
}

/** Builds the bundle unless it is up to date; returns whether it built. */
export async function ensureWebBundle(outDir = WEB_DIST_DIR): Promise<boolean> {
  if (!webBundleStale(outDir)) return false;
  await buildWebBundle(outDir);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const m = await buildWebBundle();
  process.stdout.write(`web: built ${WEB_DIST_DIR} (version ${m.version}, app.js ${(m.bytes.js / 1024).toFixed(0)} KiB, app.css ${(m.bytes.css / 1024).toFixed(1)} KiB)\n`);
}
