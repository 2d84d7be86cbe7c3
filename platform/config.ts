/**
 * The one place that reads the environment. Every other module receives a {@link Config}
 * (or a slice of it) as a dependency, so tests build configs without touching process.env.
 *
 * Each section (platform/config/) declares its variables once, as one zod schema whose
 * transform gives the section's part of the configuration; {@link Config}'s type is derived from
 * those schemas. A new variable goes in its section's schema and its transform, nowhere else.
 */
import type { z } from 'zod';
import { defaultSecretLines, dualScopeLines, modeOf } from './default-secrets.ts';
import { ingestSection, type IngestConfig } from './config/ingest.ts';
import { jobsSection, type JobsConfig } from './config/jobs.ts';
import { serverSection, type ServerConfig } from './config/server.ts';
import { storageSection, type StorageConfig } from './config/storage.ts';

export { API_SCOPES, EXPORT_LIMIT_DEFAULTS, type ApiKey, type ApiScope } from './config/server.ts';

/** The sections, in the order their offences are reported. */
export const CONFIG_SECTIONS = [serverSection, storageSection, ingestSection, jobsSection] as const;

/** Every variable a section reads, once each, in the order the sections declare them. */
export const CONFIG_VARIABLES: readonly string[] = [...new Set(CONFIG_SECTIONS.flatMap((s) => Object.keys(s.in.shape)))];

/** Parsed, validated configuration of every tool-audit process. */
export interface Config extends ServerConfig, StorageConfig, IngestConfig, JobsConfig {
  /** dev: documented default secrets allowed (a laptop); production: refused (platform/default-secrets.ts). */
  mode: 'dev' | 'production';
}

/** Result of {@link loadConfig}: a config, or a message listing every bad variable. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; error: string };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** Whether a listen address is reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

/** What the process will do with the configuration, for checks that depend on it. */
export interface LoadOptions {
  /** It serves the API on HOST: beyond loopback, API keys are required. */
  serving?: boolean;
}

/** One section parsed: its part of the configuration, or its offences as report lines. */
function parseSection<T extends z.ZodType>(section: T, env: Record<string, string | undefined>): { value?: z.output<T>; lines: string[] } {
  const r = section.safeParse(env);
  if (r.success) return { value: r.data, lines: [] };
  return { lines: r.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`) };
}

/**
 * Parses an environment (default: process.env) into a {@link Config}. Never throws; every
 * offence is named at once, before anything is opened or migrated.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, opts: LoadOptions = {}): ConfigResult {
  const server = parseSection(serverSection, env);
  const storage = parseSection(storageSection, env);
  const ingest = parseSection(ingestSection, env);
  const jobs = parseSection(jobsSection, env);
  // A variable two sections read is reported once.
  const lines = [...new Set([...server.lines, ...storage.lines, ...ingest.lines, ...jobs.lines])];
  if (opts.serving) {
    // From the raw values, so that it is reported beside the other offences, not after them.
    const host = env.HOST?.trim() || '127.0.0.1';
    if (!isLoopback(host) && !env.TOOL_AUDIT_API_KEYS?.trim()) {
      lines.push(`  HOST: ${host} is reachable beyond loopback: set TOOL_AUDIT_API_KEYS (keys with scopes ingest/read), or serve on 127.0.0.1`);
    }
  }
  const mode = modeOf(env);
  if (mode === undefined) lines.push(`  TOOL_AUDIT_MODE: must be dev or production; got ${env.TOOL_AUDIT_MODE}`);
  if (mode === 'production') lines.push(...defaultSecretLines(env), ...(server.value ? dualScopeLines(server.value.apiKeys) : []));
  if (mode === undefined || lines.length > 0 || !server.value || !storage.value || !ingest.value || !jobs.value) {
    return { ok: false, error: `invalid configuration:\n${lines.join('\n')}` };
  }
  return { ok: true, config: { mode, ...server.value, ...storage.value, ...ingest.value, ...jobs.value } };
}
