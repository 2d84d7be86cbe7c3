/**
 * Packing and installing npm packages into throwaway projects, as a user of a published
 * package would get them: `npm pack`, then `npm install <tarball>` into an empty project,
 * offline (tarballs only, no registry).
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * The environment without what `npm test` exported to its children (npm_package_*,
 * npm_lifecycle_*, npm_config_local_prefix …): a nested npm must see the temporary project,
 * not this repository.
 */
export function cleanNpmEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_userconfig', 'npm_config_cafile', 'npm_config_registry']);
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_') || keep.has(k.toLowerCase())));
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env: cleanNpmEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `npm pack` of a package directory (its prepack script included) into dest; the tarball's path. */
export function npmPack(packageDir: string, dest: string): string {
  const before = new Set(readdirSync(dest));
  npm(['pack', packageDir, '--pack-destination', dest], packageDir);
  const made = readdirSync(dest).filter((f) => f.endsWith('.tgz') && !before.has(f));
  if (made.length !== 1) throw new Error(`npm pack ${packageDir} made ${made.length} tarballs`);
  return join(dest, made[0] as string);
}

/** Creates an empty ESM project in dir. */
export function emptyProject(dir: string): void {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2));
}

/** Installs tarballs into a project without the registry. */
export function installOffline(dir: string, tarballs: string[]): void {
  npm(['install', '--offline', ...tarballs], dir);
}

/** Disk usage of a directory in KiB (`du -sk`), leaving out the named entries. */
export function duKiB(dir: string, exclude: string[] = []): number {
  const out = execFileSync('du', ['-sk', ...exclude.map((e) => `--exclude=${e}`), dir], { encoding: 'utf8' });
  return Number(out.split(/\s/)[0]);
}

/** Size of a file in bytes. */
export function fileBytes(path: string): number {
  return statSync(path).size;
}

/** Runs `node script args…` in cwd without blocking this process (a server may be running in it); its stdout. */
export async function runNode(cwd: string, script: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(process.execPath, [script, ...args], { cwd, env: cleanNpmEnv(), timeout: 60_000 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`node ${script} failed: ${e.message}\n${e.stderr ?? ''}\n${e.stdout ?? ''}`, { cause: err });
  }
}
