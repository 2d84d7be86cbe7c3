/**
 * Run once by the global setup (test/global-setup.ts): `node --import tsx test/helpers/template-data.ts DIR`
 * migrates database TEMPLATE_DB in a new embedded data directory DIR and exits. Each test process
 * then starts its engine on a copy of DIR (clickhouse.ts) instead of replaying every migration.
 */
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';
import { RETENTION, TEMPLATE_DB } from './clickhouse.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: template-data.ts DIR');
const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: TEMPLATE_DB, dataDir: dir });
const door = createClickHouseDoor(ch, TEMPLATE_DB);
await migrate(door, { retentionDays: RETENTION });
await door.close();
