/** What `tool-audit verify` reports, one record or range at a time (verify.ts and its parts). */
import type { LeafKind } from './leaf-sql.ts';

/** One thing verify found. */
export interface Finding {
  what: 'altered' | 'deleted' | 'inserted' | 'log' | 'witness' | 'future' | 'content';
  kind?: LeafKind;
  key?: string;
  leaf?: number;
  /** The data part the row is in (altered, inserted). */
  part?: string;
  detail: string;
}
