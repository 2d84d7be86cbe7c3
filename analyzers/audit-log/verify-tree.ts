/**
 * The audit log's own integrity, for `tool-audit verify`: the stored leaves against the stored
 * subtree roots and the signed root. Leaves reordered, changed, dropped or doubled in the log
 * itself are named by the block of 256 leaves they are in.
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { AppError } from '../../platform/errors.ts';
import { BLOCK, BLOCK_ROOTS } from './leaf-sql.ts';
import { doorSelect, logTiles } from './log-store.ts';
import { rangeHasher } from './tiles.ts';


/**
 * The blocks in [a, b) whose leaves do not give their stored root, joined with the stored level-8
 * roots both ways, so a block with other than 256 leaves (one dropped, one doubled) or with no
 * leaf left at all is named as surely as one whose leaves changed.
 */
const BAD_BLOCKS = `
SELECT if(t.has = 1, t.blk, n.node_index) AS blk
FROM (SELECT 1 AS has, blk, c, lower(hex(l[1])) AS got FROM (${BLOCK_ROOTS})) AS t
FULL OUTER JOIN (SELECT node_index, any(hash) AS hash FROM {db:Identifier}.audit_log_nodes WHERE level = 8 AND node_index >= {b0:UInt64} AND node_index < {b1:UInt64} GROUP BY node_index) AS n
ON n.node_index = t.blk
WHERE t.c != ${BLOCK} OR t.got != n.hash
ORDER BY blk`;

/** A range of the log that is not as its stored roots and signed head say. */
export interface LogProblem {
  /** The first leaf of the block concerned (none: the whole tree). */
  leaf?: number;
  detail: string;
}

/** The stored leaves against the stored subtree roots and the signed root. */
export async function checkTree(ch: ClickHouseDoor, size: number, root: string): Promise<LogProblem[]> {
  const findings: LogProblem[] = [];
  const full = size - (size % BLOCK);
  // A million leaves a statement, hashed where they are: a JavaScript recheck read every leaf hash
  // back (62 s of a 130 s verify at 24 M leaves).
  const STEP = 4096 * BLOCK;
  for (let a = 0; a < full; a += STEP) {
    const b = Math.min(full, a + STEP);
    const bad = await ch.select<{ blk: string }>(BAD_BLOCKS, { a, b, b0: a / BLOCK, b1: b / BLOCK }, { join_use_nulls: 0 });
    for (const r of bad) {
      const first = Number(r.blk) * BLOCK;
      findings.push({ leaf: first, detail: `leaves ${first}…${first + BLOCK - 1} no longer give their stored root (reordered, changed or missing in the log)` });
    }
  }
  if (findings.length === 0 && size > 0) {
    // Leaves missing past the last whole block, or whole blocks gone with their roots: no root to
    // compare, and that is the finding.
    try {
      const got = (await rangeHasher(logTiles(doorSelect(ch)))(0, size)).toString('hex');
      if (got !== root) findings.push({ detail: `the stored log gives root ${got}, the signed head says ${root}` });
    } catch (err) {
      // ClickHouse failed: no finding about the log; leaves or roots missing: that is the finding.
      if (err instanceof AppError && err.code !== 'INTEGRITY') throw err;
      findings.push({ detail: `the stored log cannot give the root of the ${size} leaves the newest head covers: ${(err as Error).message}` });
    }
  }
  return findings;
}
