/**
 * JSON Schema validation of tool args (M2) with Ajv: draft 2020-12 unless the schema's `$schema`
 * names 2019-09 or draft-07/06; formats from ajv-formats. Each schema compiles in an Ajv instance
 * of its own, so two manifest versions may reuse one `$id`. Pure (no I/O).
 */
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/** Validates one value; null when valid, else the validator's first errors as text. */
export type ArgsValidator = (value: unknown) => string[] | null;

/** How many of the validator's errors a violation's detail quotes. */
export const MAX_SCHEMA_ERRORS = 3;

function ajvFor(schema: AnySchema): Ajv {
  const declared = typeof schema === 'object' && schema !== null ? String((schema as { $schema?: unknown }).$schema ?? '') : '';
  // strict: false — manifests are written by others; unknown keywords (x-*, examples) are not errors.
  const opts = { allErrors: true, strict: false, validateSchema: true } as const;
  const ajv = declared.includes('2019-09') ? new Ajv2019(opts) : /draft-0[67]/.test(declared) ? new Ajv(opts) : new Ajv2020(opts);
  addFormats(ajv as Ajv);
  return ajv as Ajv;
}

/** Formats validator errors as `path: message` (root = `/`). */
export function formatErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, MAX_SCHEMA_ERRORS).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}

/** Compiles a schema once; throws when it is not a valid JSON Schema. */
export function compileValidator(schema: AnySchema): ArgsValidator {
  const validate: ValidateFunction = ajvFor(schema).compile(schema);
  return (value) => (validate(value) ? null : formatErrors(validate.errors));
}

/** Why a schema cannot be used (empty when it compiles). */
export function schemaProblems(schema: unknown): string[] {
  try {
    compileValidator(schema as AnySchema);
    return [];
  } catch (err) {
    return [`not a valid JSON Schema: ${(err as Error).message.slice(0, 300)}`];
  }
}

/**
 * A {@link schemaProblems} for many schemas at once (an MCP server's tools/list): one Ajv per
 * draft, each schema compiled and removed again. A fresh instance compiles the draft's
 * meta-schema first, ~6 ms per schema; shared, ~0.5 ms. Schemas with an `$id` still get an
 * instance of their own, so that two tools may use the same id.
 */
export function schemaChecker(): (schema: unknown) => string[] {
  const shared = new Map<string, Ajv>();
  return (schema) => {
    if (typeof schema !== 'object' || schema === null || '$id' in schema) return schemaProblems(schema);
    const declared = String((schema as { $schema?: unknown }).$schema ?? '');
    let ajv = shared.get(declared);
    if (!ajv) shared.set(declared, (ajv = ajvFor(schema as AnySchema)));
    try {
      ajv.compile(schema as AnySchema);
      return [];
    } catch (err) {
      return [`not a valid JSON Schema: ${(err as Error).message.slice(0, 300)}`];
    } finally {
      ajv.removeSchema(schema as AnySchema);
    }
  };
}
