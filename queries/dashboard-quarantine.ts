/**
 * Panel-only statement of the Pipeline health dashboard for fixing producers: each quarantined
 * packet with where its replays stand (quarantine_replays, migration 008), newest first.
 */
import type { QuerySpec } from './sql.ts';

/** Quarantined packets and the state of their replays. */
export const QUARANTINE_REPLAY_STATE: QuerySpec = {
  name: 'quarantine_replay_state',
  description:
    "Quarantined packets received in the window, newest first, with their replays: 'waiting' (never replayed), 'still failing' (replayed, rejected each time) or 'landed' (a replay was accepted or found the packet already stored).",
  sql: `SELECT
  q.source_key AS quarantine_id,
  toUnixTimestamp64Milli(q.received_at) AS received_ms,
  toString(q.reason_code) AS reason_code,
  toString(q.packet_type) AS packet_type,
  arrayStringConcat(q.ids, ' ') AS ids,
  toString(q.raw_encoding) AS raw_encoding,
  r.replays AS replays,
  r.last_outcome AS last_replay,
  multiIf(r.landed = 1, 'landed', r.replays > 0, 'still failing', 'waiting') AS state
FROM {db:Identifier}.quarantine AS q
LEFT JOIN (
  SELECT quarantine_id, uniqExact(replay_id) AS replays, argMax(toString(outcome), replayed_at) AS last_outcome, max(outcome IN ('accepted', 'duplicate')) AS landed
  FROM {db:Identifier}.quarantine_replays
  GROUP BY quarantine_id
) AS r ON r.quarantine_id = q.source_key
WHERE q.received_at >= {from:DateTime64(3, 'UTC')} AND q.received_at < {to:DateTime64(3, 'UTC')}
ORDER BY q.received_at DESC, q.source_key DESC
LIMIT {limit:UInt32}`,
  params: {
    db: 'database of the segments (Identifier)',
    from: "inclusive lower bound of received_at, 'YYYY-MM-DD hh:mm:ss.sss' UTC",
    to: 'exclusive upper bound of received_at, same format',
    limit: 'rows to return',
  },
};
