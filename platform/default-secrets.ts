/**
 * Secrets with a documented default (docker-compose.yml gives each one so that the stack starts
 * on a laptop): whoever has read the docs knows them, so outside dev mode a process refuses to
 * start while any is in use, naming each. Dev mode is the embedded engine's default (a laptop,
 * the API on 127.0.0.1); with a ClickHouse server the default is production. Pure: reads the raw
 * environment it is given, as the configuration does.
 */

/** The documented defaults, by variable. */
export const DOCUMENTED_DEFAULTS: Readonly<Record<string, readonly string[]>> = {
  TOOL_AUDIT_API_KEYS: ['dev-ingest-key-0001', 'dev-read-key-0001'],
  TOOL_AUDIT_API_KEY: ['dev-ingest-key-0001', 'dev-read-key-0001'],
  REDACTION_KEY: ['dev-redaction-key-change-me'],
  CLICKHOUSE_PASSWORD: ['change-me-admin', 'change-me-ingest', 'change-me-analyzer', 'change-me-api', 'change-me-reader'],
  // compose hands the `migrate` service every password of the stack, so that one refusal stops
  // all of it (every other service waits for migrate): ClickHouse's users' and Grafana's admin's.
  CLICKHOUSE_ADMIN_PASSWORD: ['change-me-admin'],
  CLICKHOUSE_INGEST_PASSWORD: ['change-me-ingest'],
  CLICKHOUSE_ANALYZER_PASSWORD: ['change-me-analyzer'],
  CLICKHOUSE_API_PASSWORD: ['change-me-api'],
  CLICKHOUSE_READER_PASSWORD: ['change-me-reader'],
  GRAFANA_ADMIN_PASSWORD: ['change-me-grafana', 'admin'],
};

/** The mode a process runs in: TOOL_AUDIT_MODE, else dev on the embedded engine and production with a server. */
export function modeOf(env: Record<string, string | undefined>): 'dev' | 'production' | undefined {
  const m = env.TOOL_AUDIT_MODE?.trim();
  if (m === 'dev' || m === 'production') return m;
  if (m) return undefined;
  return env.CLICKHOUSE_URL?.trim() ? 'production' : 'dev';
}

/** One line per variable holding a documented default (an API key list: any of its keys). */
export function defaultSecretLines(env: Record<string, string | undefined>): string[] {
  const lines: string[] = [];
  for (const [name, defaults] of Object.entries(DOCUMENTED_DEFAULTS)) {
    const raw = env[name]?.trim();
    if (!raw) continue;
    const values = name === 'TOOL_AUDIT_API_KEYS' ? raw.split(/[;\n]/).map((e) => e.split(':')[0]?.trim() ?? '') : [raw];
    if (values.some((v) => defaults.includes(v))) {
      lines.push(`  ${name}: holds the documented default (docker-compose.yml), which anyone can read: set a secret of your own, or TOOL_AUDIT_MODE=dev on a machine of your own`);
    }
  }
  return lines;
}

/**
 * One line per API key that carries both `ingest` and `read`: whoever holds it can send calls with
 * chosen secrets (password=0000 … 9999) and read back their placeholders — a table from
 * placeholder to secret for every short secret stored. Placeholders stay deterministic (one secret,
 * one placeholder: repeats stay repeats), so the defence is that no one key does both. Keys are
 * named by their first 4 characters only.
 */
export function dualScopeLines(keys: ReadonlyArray<{ key: string; scopes: readonly string[] }>): string[] {
  return keys
    .filter((k) => k.scopes.includes('ingest') && k.scopes.includes('read'))
    .map((k) => `  TOOL_AUDIT_API_KEYS: the key ${k.key.slice(0, 4)}… carries both ingest and read: with it one can store chosen secrets and read back their placeholders; give agents ingest keys and people read keys, or TOOL_AUDIT_MODE=dev on a machine of your own`);
}
