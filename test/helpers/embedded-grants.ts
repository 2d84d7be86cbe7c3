/**
 * A ClickHouse configuration for the embedded engine (chDB) whose one user holds exactly the
 * given grants. chDB runs every statement as `default` and cannot CREATE USER (its access storage
 * is users.xml, read-only), so a compose role's GRANTs are given to `default` instead: the engine
 * started with this file (CLICKHOUSE_EMBEDDED_CONFIG, or `--config-file`) enforces them.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Writes config.xml and users.xml to a new directory; returns config.xml's path. `grants` are
 * GRANT statements without `TO …`; 'admin' gives access management (every privilege).
 */
export function grantsConfig(grants: readonly string[] | 'admin'): string {
  const dir = mkdtempSync(join(tmpdir(), 'ta-grants-'));
  const grantsXml = grants === 'admin' ? '<access_management>1</access_management>' : `<grants>${grants.map((g) => `<query>${escapeXml(g)}</query>`).join('')}</grants>`;
  writeFileSync(
    join(dir, 'users.xml'),
    `<clickhouse><profiles><default/></profiles><quotas><default/></quotas><users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota>${grantsXml}</default></users></clickhouse>`,
  );
  writeFileSync(join(dir, 'config.xml'), `<clickhouse><users_config>${join(dir, 'users.xml')}</users_config></clickhouse>`);
  return join(dir, 'config.xml');
}

/** A role's GRANT statements from the init script's SQL, without their `TO …`. */
export function roleGrants(all: ReadonlyArray<{ to: string; statement: string }>, user: string): string[] {
  return all.filter((g) => g.to === user).map((g) => g.statement.replace(/ TO \S+$/, ''));
}
