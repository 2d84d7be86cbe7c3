/**
 * How one environment variable becomes a value: the zod pieces every configuration section is
 * made of. An environment holds only strings, so each piece coerces, defaults and checks the text
 * and names the variable in its message (the sections key each piece by its variable's name).
 */
import { z } from 'zod';

/** A whole number of at least `min`, `def` when unset. */
export const intFromEnv = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

/** `true`/`false`/`1`/`0`, `def` when unset. */
export const flag = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(def ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** `on`/`off` as a boolean, `def` when unset. */
export const onOff = (def: 'on' | 'off') =>
  z
    .enum(['on', 'off'])
    .default(def)
    .transform((v) => v === 'on');

/** A trimmed text, or undefined when unset or blank. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** A JSON value from one variable, checked by `schema`; the variable's name in every message. */
export const jsonFromEnv = <T extends z.ZodType>(name: string, schema: T) =>
  z
    .string()
    .optional()
    .transform((raw, ctx): z.infer<T> | undefined => {
      if (raw === undefined || raw.trim() === '') return undefined;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `${name} is not JSON: ${(err as Error).message}` });
        return z.NEVER;
      }
      const r = schema.safeParse(value);
      if (r.success) return r.data as z.infer<T>;
      ctx.addIssue({ code: 'custom', message: `${name}: ${r.error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; ')}` });
      return z.NEVER;
    });

/**
 * Variables more than one section derives a value from. Each is declared here once and put in
 * every section that reads it; the loader reports an offence in one of them once.
 */
export const SHARED_VARIABLES = {
  /** The embedded engine's data directory; the state folders' defaults are beside or in it. */
  TOOL_AUDIT_DATA_DIR: z.string().default('./data'),
  /** The database; the audit log's default origin names it. */
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a plain identifier').default('tool_audit'),
};

/** A data directory's path without trailing slashes, to put a name beside or under it. */
export const dirBase = (dir: string): string => dir.replace(/\/+$/, '');
