/**
 * `tool-audit manifests apply FILE|DIR`: a tool manifest (YAML or JSON, tool-smith format)
 * becomes the next version, whole, or is refused with every error named and nothing applied.
 * To a running server with --url / TOOL_AUDIT_URL (PUT /v1/manifests, the `admin` scope's key in
 * TOOL_AUDIT_API_KEY), else straight to ClickHouse.
 */
import { applyManifest, type AppliedVersion } from '../analyzers/manifest-store.ts';
import { AppError } from '../platform/errors.ts';
import type { Manifest } from '../schemas/tool-manifest.ts';
import { loadManifestFiles } from './manifest-files.ts';
import { configOrExit, startRuntime } from './runtime.ts';
import { parseArgs } from './task.ts';
import { USAGES } from './usage.ts';


/** `tool-audit manifests <subcommand>`. */
export async function manifests(argv: string[]): Promise<void> {
  const { flags, positional } = parseArgs(argv);
  const [sub, target] = positional;
  if (sub !== 'apply' || !target) {
    process.stderr.write(`${USAGES.manifests}\n`);
    process.exit(2);
  }
  const loaded = loadManifestFiles(target);
  if (!loaded.ok) {
    process.stderr.write(`tool-audit manifests: ${target} refused, nothing applied:\n${loaded.errors.map((e) => `  ${e}`).join('\n')}\n`);
    process.exit(1);
  }
  const config = configOrExit();
  const url = flags.url ?? config.client.url;
  const applied = url ? await putManifest(url, config.client.apiKey, loaded.manifest) : await applyDirect(loaded.manifest);
  process.stdout.write(`manifest version ${applied.version} applied: ${applied.tools} tools, in force from ${applied.effective_at}\n`);
  for (const w of applied.warnings) process.stderr.write(`warning: ${w}\n`);
}

async function applyDirect(manifest: Manifest): Promise<AppliedVersion> {
  const rt = await startRuntime('tool-audit-cli');
  try {
    return await applyManifest(rt.clickhouse, manifest);
  } finally {
    await rt.clickhouse.close();
  }
}

/** PUT /v1/manifests; the manifest goes as JSON with its schemas inline. */
export async function putManifest(url: string, apiKey: string | undefined, manifest: Manifest): Promise<AppliedVersion> {
  let res: Response;
  try {
    res = await fetch(`${url.replace(/\/+$/, '')}/v1/manifests`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(manifest),
      signal: AbortSignal.timeout(60_000),
    });
  } catch (err) {
    throw new AppError('SERVER_UNAVAILABLE', `PUT ${url}/v1/manifests failed: ${(err as Error).message}`, { retryable: true, cause: err });
  }
  const body = (await res.json().catch(() => ({}))) as AppliedVersion & { message?: string; errors?: string[] };
  if (!res.ok) {
    const detail = body.errors?.length ? `\n  ${body.errors.join('\n  ')}` : '';
    throw new AppError(res.status >= 500 ? 'SERVER_UNAVAILABLE' : 'SERVER_REFUSED', `PUT /v1/manifests answered ${res.status}: ${body.message ?? ''}${detail}`, { retryable: res.status >= 500 });
  }
  return body;
}
