/**
 * `tool-audit dashboards [--out DIR] [--database NAME] [--check]`: writes the Grafana dashboards
 * as JSON, one file per dashboard (default deploy/grafana/dashboards, which docker-compose
 * provisions). --check writes nothing and exits 1 when the files on disk differ.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDashboards, dashboardJson, DEFAULT_DASHBOARD_OPTIONS, DEFAULT_DASHBOARDS_DIR } from '../dashboards/index.ts';

/** Runs the command with its arguments. */
export function dashboards(argv: string[]): void {
  const { values } = parseArgs({
    args: argv,
    options: {
      out: { type: 'string', default: DEFAULT_DASHBOARDS_DIR },
      database: { type: 'string', default: DEFAULT_DASHBOARD_OPTIONS.database },
      check: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const files = buildDashboards({ database: values.database });
  if (values.check) {
    const stale = files.filter((f) => {
      const path = join(values.out, f.file);
      return !existsSync(path) || readFileSync(path, 'utf8') !== dashboardJson(f.dashboard);
    });
    for (const f of stale) process.stderr.write(`stale: ${join(values.out, f.file)}\n`);
    if (stale.length > 0) {
      process.stderr.write('run `tool-audit dashboards` to regenerate\n');
      process.exit(1);
    }
    process.stdout.write(`${files.length} dashboards in ${values.out} are up to date\n`);
    return;
  }
  mkdirSync(values.out, { recursive: true });
  for (const f of files) {
    writeFileSync(join(values.out, f.file), dashboardJson(f.dashboard));
    process.stdout.write(`${join(values.out, f.file)}: ${f.dashboard.title} (${f.dashboard.panels?.length ?? 0} panels)\n`);
  }
}
