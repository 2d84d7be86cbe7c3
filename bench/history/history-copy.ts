/**
 * A bench that reads the bench:history history in its own process (bench:audit-log,
 * bench:search): the history built or reused, copied for the run (hard links unless `copy` is
 * 'full'), its configuration, and the door `serve` opens on it (a connection per lane).
 */
import { resolve } from 'node:path';
import { openClickHouse } from '../../cli/runtime.ts';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { loadConfig, type Config } from '../../platform/config.ts';
import type { HistoryMeta, HistoryShape } from './history-data.ts';
import { copyHistory, ensureHistory } from './history-db.ts';

/** The copy's history meta, configuration and door (the caller closes it). */
export async function openHistoryCopy(o: { dataDir: string; shape: HistoryShape; copy: string | undefined; log: (s: string) => void }): Promise<{ meta: HistoryMeta; config: Config; door: ClickHouseDoor }> {
  const dir = resolve(o.dataDir);
  const meta = await ensureHistory(dir, o.shape, o.log);
  const { dataDir } = copyHistory(dir, o.copy === 'full' ? 'full' : 'link');
  const cfg = loadConfig({ ...process.env, TOOL_AUDIT_DATA_DIR: dataDir });
  if (!cfg.ok) throw new Error(cfg.error);
  return { meta, config: cfg.config, door: await openClickHouse(cfg.config) };
}
