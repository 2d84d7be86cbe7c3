/**
 * docker-compose.yml validated without a Docker engine: parsed as YAML (with merge keys and
 * compose's ${VAR:-default} interpolation), then checked for start order, healthchecks, pinned
 * images, commented ports, each tool-audit process's configuration and ClickHouse user.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isMap, isPair, isScalar, parse, parseDocument, type Pair } from 'yaml';
import { loadConfig } from '../../../platform/config.ts';
import { grants, runInitScript, TEST_ENV } from './users-sql.ts';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | boolean>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  restart?: string;
}

const text = readFileSync(new URL('../../../docker-compose.yml', import.meta.url), 'utf8');

/** Compose's variable interpolation with an empty environment: defaults apply, $$ is a literal $. */
function interpolate(s: string, env: Record<string, string> = {}): string {
  return s.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, braced?: string, op?: string, def?: string, plain?: string) => {
    if (m === '$$') return '$';
    const name = braced ?? plain ?? '';
    const v = env[name];
    if (op === ':-') return v === undefined || v === '' ? (def ?? '') : v;
    if (op === '-') return v === undefined ? (def ?? '') : v;
    return v ?? '';
  });
}

type Compose = { services: Record<string, Service>; volumes?: Record<string, unknown> };
const composeWith = (env: Record<string, string>) => parse(interpolate(text, env), { merge: true }) as Compose;
/** A deployment's own secrets, as its .env gives them: what the stack runs with outside dev mode. */
const SECRETS = {
  CLICKHOUSE_ADMIN_PASSWORD: 'admin-Pw-41f7c2',
  CLICKHOUSE_INGEST_PASSWORD: 'ingest-Pw-9b1d0e',
  CLICKHOUSE_ANALYZER_PASSWORD: 'analyzer-Pw-77aa31',
  CLICKHOUSE_API_PASSWORD: 'api-Pw-c0ffee5',
  CLICKHOUSE_READER_PASSWORD: 'reader-Pw-5e5e12',
  GRAFANA_ADMIN_PASSWORD: 'grafana-Pw-0d9c88',
  TOOL_AUDIT_API_KEYS: 'prod-ingest-key-8f3a61c2d9:ingest;prod-read-key-61d0aa7e35:read',
  TOOL_AUDIT_API_KEY: 'prod-ingest-key-8f3a61c2d9',
  TOOL_AUDIT_REDACTION_KEY: 'prod-redaction-key-2b7e151628aed2a6',
};
const compose = composeWith(SECRETS);
const services = compose.services;
const names = Object.keys(services);
const TOOL_AUDIT = ['migrate', 'ingest', 'analyze', 'api'];
const envOf = (name: string) => Object.fromEntries(Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [k, String(v)]));

describe('docker-compose.yml', () => {
  it('runs Kafka, ClickHouse, migrations, ingest, the analyzer, the API and Grafana', () => {
    expect(names.sort()).toEqual(['analyze', 'api', 'clickhouse', 'grafana', 'ingest', 'kafka', 'migrate']);
  });

  it('starts in order: depends_on names existing services, with conditions they can meet, and no cycle', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
        expect(names, `${name} depends on ${dep}`).toContain(dep);
        if (condition === 'service_healthy') expect(services[dep]?.healthcheck, `${dep} needs a healthcheck for ${name}`).toBeDefined();
        else expect(condition).toBe('service_completed_successfully');
        if (condition === 'service_completed_successfully') expect(services[dep]?.restart, `${dep} must be one-shot`).toBe('no');
      }
    }
    const order: string[] = [];
    const visit = (n: string, path: string[]) => {
      expect(path, `cycle through ${n}`).not.toContain(n);
      if (order.includes(n)) return;
      for (const d of Object.keys(services[n]?.depends_on ?? {})) visit(d, [...path, n]);
      order.push(n);
    };
    names.forEach((n) => visit(n, []));
    const before = (a: string, b: string) => expect(order.indexOf(a), `${a} before ${b}`).toBeLessThan(order.indexOf(b));
    for (const s of ['ingest', 'analyze', 'api', 'grafana']) before('migrate', s);
    before('clickhouse', 'migrate');
    before('kafka', 'ingest');
    before('kafka', 'api');
    expect(services.migrate?.depends_on?.clickhouse?.condition).toBe('service_healthy');
  });

  it('has a healthcheck for every long-running service', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.restart === 'no') continue;
      expect(s.healthcheck?.test?.length, name).toBeGreaterThan(0);
    }
  });

  it('pins every image to a version', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build !== undefined) continue;
      expect(s.image, name).toMatch(/^[\w./-]+:\d+(\.\d+)+$/);
    }
    expect(services.kafka?.image).toBe('apache/kafka:4.3.1');
    expect(services.clickhouse?.image).toMatch(/^clickhouse\/clickhouse-server:26\./);
  });

  it('comments every port it exposes or publishes', () => {
    const doc = parseDocument(text);
    const servicesNode = doc.get('services', true);
    if (!isMap(servicesNode)) throw new Error('services is not a map');
    for (const pair of servicesNode.items as Array<Pair<unknown, unknown>>) {
      if (!isPair(pair) || !isScalar(pair.key) || !isMap(pair.value)) continue;
      const name = String(pair.key.value);
      const [start, , end] = pair.value.range ?? [0, 0, 0];
      const comments = text
        .slice(start, end)
        .split('\n')
        .filter((l) => l.trim().startsWith('#'))
        .join('\n');
      const s = services[name];
      for (const entry of [...(s?.ports ?? []), ...(s?.expose ?? [])]) {
        const port = String(entry).split(':').pop();
        expect(comments, `${name}: port ${entry} has no comment`).toMatch(new RegExp(`#\\s*${port}:`));
      }
    }
    // On loopback unless the deployment says otherwise.
    expect(services.api?.ports).toEqual(['127.0.0.1:8080:8080']);
    expect(services.grafana?.ports).toEqual(['127.0.0.1:3000:3000']);
    const published = composeWith({ ...SECRETS, TOOL_AUDIT_PUBLISH_ADDRESS: '0.0.0.0' }).services;
    expect([published.api?.ports, published.grafana?.ports]).toEqual([['0.0.0.0:8080:8080'], ['0.0.0.0:3000:3000']]);
    for (const internal of ['kafka', 'clickhouse', 'ingest', 'analyze']) expect(services[internal]?.ports, `${internal} is internal`).toBeUndefined();
  });

  it('gives every tool-audit process a configuration platform/config.ts accepts', () => {
    for (const name of TOOL_AUDIT) {
      const r = loadConfig(envOf(name));
      expect(r.ok ? '' : r.error, name).toBe('');
    }
  });

  it('refuses its documented defaults outside dev mode, naming each; migrate sees every secret of the stack', () => {
    // The oracle: every value the file gives by default that a deployment must replace.
    const defaults = new Set([...text.matchAll(/\$\{[A-Z_]+:-((?:change-me|dev-)[^}]*)\}/g)].map((m) => m[1] as string));
    expect(defaults.size).toBeGreaterThanOrEqual(8);
    const bare = composeWith({}).services;
    for (const name of TOOL_AUDIT) {
      const env = Object.fromEntries(Object.entries(bare[name]?.environment ?? {}).map(([k, v]) => [k, String(v)]));
      const holding = Object.entries(env)
        .filter(([, v]) => [...defaults].some((d) => v === d || v.split(/[;:]/).includes(d)))
        .map(([k]) => k);
      expect(holding.length, name).toBeGreaterThan(0);
      const r = loadConfig(env);
      expect(r.ok, name).toBe(false);
      const named = r.ok ? [] : [...r.error.matchAll(/^ {2}([A-Z_]+): holds the documented default/gm)].map((m) => m[1]);
      expect(named.sort(), name).toEqual(holding.sort());
      expect(loadConfig({ ...env, TOOL_AUDIT_MODE: 'dev' }).ok, `${name} in dev mode`).toBe(true);
    }
    // Grafana's admin and every ClickHouse user's password reach migrate, which all else waits for.
    const checked = Object.keys(bare.migrate?.environment ?? {});
    for (const v of ['GRAFANA_ADMIN_PASSWORD', 'CLICKHOUSE_INGEST_PASSWORD', 'CLICKHOUSE_ANALYZER_PASSWORD', 'CLICKHOUSE_API_PASSWORD', 'CLICKHOUSE_READER_PASSWORD']) expect(checked).toContain(v);
    expect(envOf('grafana').GF_SECURITY_ADMIN_PASSWORD).toBe(envOf('migrate').GRAFANA_ADMIN_PASSWORD);
  });

  it('runs each process as its own ClickHouse user; only migrate changes the schema', () => {
    const cfg = (name: string) => {
      const r = loadConfig(envOf(name));
      if (!r.ok) throw new Error(r.error);
      return r.config;
    };
    expect(cfg('migrate').clickhouse.user).toBe(envOf('clickhouse').CLICKHOUSE_USER);
    expect(cfg('migrate').clickhouse.password).toBe(envOf('clickhouse').CLICKHOUSE_PASSWORD);
    const users = { ingest: ['tool_audit_ingest', 'CLICKHOUSE_INGEST_PASSWORD'], analyze: ['tool_audit_analyzer', 'CLICKHOUSE_ANALYZER_PASSWORD'], api: ['tool_audit_api', 'CLICKHOUSE_API_PASSWORD'] } as const;
    const granted = new Set(grants(runInitScript(TEST_ENV).sql).map((g) => g.to));
    for (const [name, [user, passwordVar]] of Object.entries(users)) {
      const c = cfg(name);
      expect(c.clickhouse.user, name).toBe(user);
      expect(granted.has(user), `${user} is created by the init script`).toBe(true);
      expect(c.clickhouse.password, name).toBe(envOf('clickhouse')[passwordVar]);
      expect(c.migrateOnStart, name).toBe(false);
      expect(c.clickhouse.url).toBe('http://clickhouse:8123');
      expect(c.clickhouse.database).toBe(envOf('clickhouse').CLICKHOUSE_DB);
    }
    expect(envOf('grafana').CLICKHOUSE_READER_PASSWORD).toBe(envOf('clickhouse').CLICKHOUSE_READER_PASSWORD);
  });

  it('keeps the API a process that produces to Kafka: no in-process worker, analyzer or migrations', () => {
    const r = loadConfig(envOf('api'));
    if (!r.ok) throw new Error(r.error);
    expect(services.api?.command).toEqual(['serve']);
    expect(r.config.kafka.brokers).toEqual(['kafka:9092']);
    expect(r.config.ingest.workerInProcess).toBe(false);
    expect(r.config.analysis.enabledInServe).toBe(false);
    expect(r.config.migrateOnStart).toBe(false);
    const demoKey = r.config.apiKeys.find((k) => k.key === r.config.client.apiKey);
    expect(demoKey?.scopes, 'the demo client key is a configured ingest key').toContain('ingest');
    expect(r.config.client.url).toBe('http://api:8080');
    expect(services.ingest?.command).toEqual(['ingest']);
    expect(services.analyze?.command).toEqual(['analyze']);
    expect(services.migrate?.command).toEqual(['migrate']);
  });

  it('keeps the audit log builder\'s key and ledger on a volume of their own, which the image lets the node user write', () => {
    const r = loadConfig(envOf('analyze'));
    if (!r.ok) throw new Error(r.error);
    const dir = r.config.auditLog.dir;
    const mounts = (services.analyze?.volumes ?? []).map((v) => v.split(':'));
    const mount = mounts.find(([, target]) => target === dir);
    expect(mount, `a volume mounted at ${dir}`).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(mount?.[0]);
    // Not ClickHouse's volume: a copy of the database carries neither the key nor the checkpoints.
    expect((services.clickhouse?.volumes ?? []).some((v) => v.startsWith(`${mount?.[0]}:`))).toBe(false);
    const dockerfile = readFileSync(new URL('../../../Dockerfile', import.meta.url), 'utf8');
    expect(dockerfile).toMatch(new RegExp(`mkdir -p ${dir}[^\\n]*chown -R node:node`));
  });

  it('lets ingest scale: no fixed host port or container name', () => {
    expect(services.ingest?.ports).toBeUndefined();
    expect((services.ingest as Record<string, unknown>).container_name).toBeUndefined();
  });

  it("keeps ClickHouse's own logs seven days, from a config.d file the server reads", () => {
    expect(services.clickhouse?.volumes).toContain('./deploy/clickhouse/config.d/system-log-ttl.xml:/etc/clickhouse-server/config.d/system-log-ttl.xml:ro');
    const xml = readFileSync(new URL('../../../deploy/clickhouse/config.d/system-log-ttl.xml', import.meta.url), 'utf8');
    expect(xml).toMatch(/^<\?xml version="1.0"\?>\n/);
    const sections = [...xml.matchAll(/<([a-z_]+)>\s*<ttl>[^<]+<\/ttl>\s*<\/\1>/g)].map((m) => m[1]);
    expect(sections).toEqual(expect.arrayContaining(['query_log', 'trace_log', 'part_log', 'metric_log']));
    // Nothing else in <clickhouse>: a section of a log that is off by default would turn it on.
    expect(xml.replace(/<!--[\s\S]*?-->/g, '').match(/<[a-z_]+>/g)).toEqual(['<clickhouse>', ...sections.map((s) => `<${s}>`).flatMap((s) => [s, '<ttl>'])]);
  });

  it('creates the ClickHouse users on first start from deploy/clickhouse/initdb', () => {
    expect(services.clickhouse?.volumes).toContain('./deploy/clickhouse/initdb:/docker-entrypoint-initdb.d:ro');
    for (const v of ['CLICKHOUSE_INGEST_PASSWORD', 'CLICKHOUSE_ANALYZER_PASSWORD', 'CLICKHOUSE_API_PASSWORD', 'CLICKHOUSE_READER_PASSWORD', 'CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_DB']) {
      expect(envOf('clickhouse')[v], v).toBeTruthy();
    }
    expect(services.clickhouse?.healthcheck?.test.join(' ')).toContain('$CLICKHOUSE_USER');
  });
});

describe('docker-compose.yml and the test broker', () => {
  it('pins the same Kafka version the tests assemble from Maven Central', () => {
    const script = /KAFKA_VERSION="\$\{TOOL_AUDIT_KAFKA_VERSION:-([0-9.]+)\}"/.exec(readFileSync(new URL('../../../scripts/kafka-services.sh', import.meta.url), 'utf8'))?.[1];
    const compose = /image: apache\/kafka:([0-9.]+)/.exec(text)?.[1];
    expect(script).toMatch(/^\d+\.\d+\.\d+$/);
    expect(compose).toBe(script);
  });
});
