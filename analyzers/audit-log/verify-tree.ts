/**
 * The audit log's own integrity, for `tool-audit verify`: the stored leaves against the stored
 * subtree roots and the signed root.
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { doorSelect, logTiles } from './log-store.ts';
import { rangeHasher } from './tiles.ts';
import type { Finding } from './verify.ts';

/**
 * The root of each block of 256 leaves, computed by ClickHouse from the stored leaves (8 levels of
 * pairs, RFC 9162 node hashes), in blocks [b0, b1): with the block's leaf count and its stored root.
 */
const BLOCK_ROOTS = `
SELECT b, c, lower(hex(l8[1])) AS got, n.hash AS want FROM (
  SELECT intDiv(leaf_index, 256) AS b, count() AS c,
    arrayMap(p -> p.2, arraySort(p -> p.1, groupArray((leaf_index, leaf_hash)))) AS l0,
    ${[1, 2, 3, 4, 5, 6, 7, 8].map((k) => `arrayMap(i -> SHA256(concat(char(1), l${k - 1}[2 * i - 1], l${k - 1}[2 * i])), range(1, ${2 ** (8 - k) + 1})) AS l${k}`).join(',\n    ')}
  FROM {db:Identifier}.audit_log_leaves WHERE leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64} GROUP BY b HAVING c = 256
) AS t
LEFT JOIN (SELECT node_index, any(hash) AS hash FROM {db:Identifier}.audit_log_nodes WHERE level = 8 AND node_index >= {b0:UInt64} AND node_index < {b1:UInt64} GROUP BY node_index) AS n
ON n.node_index = t.b
WHERE got != n.hash
ORDER BY b`;

/** The stored leaves against the stored subtree roots and the signed root. */
export async function checkTree(ch: ClickHouseDoor, size: number, root: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  const BLOCK = 256;
  const full = size - (size % BLOCK);
  // Each complete block's root, computed where the leaves are (a JavaScript recheck read every
  // leaf hash back: 62 s of a 130 s verify at 24 M leaves), a million leaves a statement.
  const STEP = 4096 * BLOCK;
  for (let a = 0; a < full; a += STEP) {
    const b = Math.min(full, a + STEP);
    const bad = await ch.select<{ b: string }>(BLOCK_ROOTS, { a, b, b0: a / BLOCK, b1: b / BLOCK }, { join_use_nulls: 0 });
    // A block with other than 256 leaves (one dropped, one doubled) is left out by HAVING: count them apart.
    const [counts] = await ch.select<{ blocks: string }>(
      'SELECT count() AS blocks FROM (SELECT intDiv(leaf_index, 256) AS blk, count() AS c FROM {db:Identifier}.audit_log_leaves WHERE leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64} GROUP BY blk HAVING c = 256)',
      { a, b },
    );
    const whole = new Set<number>();
    if (Number(counts?.blocks ?? 0) !== (b - a) / BLOCK) {
      const ok = await ch.select<{ blk: string }>('SELECT intDiv(leaf_index, 256) AS blk FROM {db:Identifier}.audit_log_leaves WHERE leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64} GROUP BY blk HAVING count() = 256', { a, b });
      for (const r of ok) whole.add(Number(r.blk));
      for (let k = a / BLOCK; k < b / BLOCK; k++) if (!whole.has(k)) bad.push({ b: String(k) });
    }
    for (const r of bad.sort((x, y) => Number(x.b) - Number(y.b))) {
      const first = Number(r.b) * BLOCK;
      findings.push({ what: 'log', leaf: first, detail: `leaves ${first}…${first + BLOCK - 1} no longer give their stored root (reordered, changed or missing in the log)` });
    }
  }
  if (findings.length === 0 && size > 0) {
    const got = (await rangeHasher(logTiles(doorSelect(ch)))(0, size)).toString('hex');
    if (got !== root) findings.push({ what: 'log', detail: `the stored log gives root ${got}, the signed head says ${root}` });
  }
  return findings;
}
