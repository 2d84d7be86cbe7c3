/**
 * Read routes of the audit log: a record's proof of inclusion, the signed heads and their
 * consistency.
 */
import { z } from 'zod';
import { uuidSchema } from '../../schemas/common.ts';
import { consistencyProofSchema, inclusionProofSchema, logHeadsSchema, type InclusionProof, type LogHeadsParams, type NoProof } from '../../queries/audit-log-proof.ts';
import type { ReadQueries } from '../../queries/index.ts';
import { notFound } from '../../platform/errors.ts';
import { intParam, pathId } from '../read-params.ts';
import { readRoute, type ReadRoute } from './route.ts';

/** The records a proof of inclusion is served for: path segment, path parameter, query method, how the log names its kind. */
const PROVABLE: ReadonlyArray<{ path: string; param: string; arg: string; method: keyof ReadQueries; kind: string; noun: string; prove: (qs: ReadQueries, id: string) => Promise<InclusionProof | NoProof> }> = [
  { path: 'calls', param: 'call_id', arg: 'callId', method: 'callProof', kind: 'tool_call', noun: 'call', prove: (qs, id) => qs.callProof({ callId: id }) },
  { path: 'outputs', param: 'output_id', arg: 'outputId', method: 'outputProof', kind: 'output', noun: 'output', prove: (qs, id) => qs.outputProof({ outputId: id }) },
  { path: 'turns', param: 'turn_id', arg: 'turnId', method: 'turnProof', kind: 'model turn', noun: 'model turn', prove: (qs, id) => qs.turnProof({ turnId: id }) },
  { path: 'runs', param: 'run_id', arg: 'runId', method: 'runProof', kind: 'agent run', noun: 'agent run', prove: (qs, id) => qs.runProof({ runId: id }) },
];

/** These read routes, in the order /openapi.json lists them. */
export const AUDIT_LOG_ROUTES: ReadRoute[] = [
  ...proofRoutes(),
  readRoute({
    url: '/v1/log/heads',
    operationId: 'logHeads',
    method: 'logHeads',
    request: (p: LogHeadsParams) => ({ query: { from_size: p.fromSize, to_size: p.toSize, limit: p.limit } }),
    summary: 'Signed tree heads of the audit log with tree_size in [from_size, to_size], oldest first: keep them outside tool-audit, and a later head must be consistent with them.',
    query: z.strictObject({
      from_size: intParam(0, Number.MAX_SAFE_INTEGER).optional().describe('smallest tree size (default 0)'),
      to_size: intParam(0, Number.MAX_SAFE_INTEGER).optional().describe('largest tree size (default: the newest)'),
      limit: intParam(1, 10_000).optional().describe('heads at most (default 1000)'),
    }),
    response: logHeadsSchema,
    run: (qs, { query: q }) => {
      return qs.logHeads({ fromSize: q.from_size ?? 0, toSize: q.to_size ?? Number.MAX_SAFE_INTEGER, limit: q.limit ?? 1000 });
    },
  }),
  readRoute({
    url: '/v1/log/consistency/:from_size/:to_size',
    operationId: 'logConsistency',
    method: 'logConsistency',
    request: (p: { fromSize: number; toSize: number }) => ({ params: { from_size: String(p.fromSize), to_size: String(p.toSize) }, query: {} }),
    summary: 'The RFC 9162 consistency proof between the signed heads of two tree sizes: the older tree is a prefix of the newer (nothing logged was changed or taken out). Check it offline with `tool-audit verify-proof FILE --public-key K`. 404 when to_size has no signed head; 409 when from_size has none while to_size has one (it was removed or never signed: the answer names the root the stored leaves give at from_size, to compare with the checkpoint you hold).',
    params: z.strictObject({ from_size: pathId.describe('the older tree size (one of a signed head)'), to_size: pathId.describe('the newer tree size (one of a signed head), ≥ from_size') }),
    query: z.strictObject({}),
    response: consistencyProofSchema,
    notFound: 'no signed head has to_size, or from_size > to_size',
    conflict: 'no signed head of from_size is stored while to_size has one: the message names the root the stored leaves give at from_size',
    run: async (qs, { params }) => {
      const size = (s: string | undefined) => (/^[1-9][0-9]{0,15}$/.test(s ?? '') ? Number(s) : undefined);
      const [from, to] = [size(params.from_size), size(params.to_size)];
      const found = from !== undefined && to !== undefined ? await qs.logConsistency({ fromSize: from, toSize: to }) : null;
      if (!found) throw notFound(`no signed heads of tree sizes ${params.from_size} and ${params.to_size} (from_size ≤ to_size)`);
      return found;
    },
  }),
];

/** GET /v1/calls/{call_id}/proof, GET /v1/outputs/{output_id}/proof, GET /v1/turns/{turn_id}/proof and GET /v1/runs/{run_id}/proof. */
function proofRoutes(): ReadRoute[] {
  const proven = (what: string, r: InclusionProof | NoProof) => {
    if (!('why' in r)) return r;
    throw notFound(r.why === 'not_yet' ? `${what} is not in a signed tree of the audit log yet (leaves are added a minute after a row is stored, heads signed every AUDIT_LOG_HEAD_INTERVAL_MS)` : `no ${what}`);
  };
  const summary = (what: string) =>
    `The ${what}'s proof of inclusion in the audit log: its leaf (the record as serialized, and its hash), the RFC 9162 inclusion path and the newest signed tree head. Check it offline with \`tool-audit verify-proof FILE --public-key K\`. 404 when unknown or not in a signed tree yet.`;
  return PROVABLE.map((k) =>
    readRoute({
      url: `/v1/${k.path}/:${k.param}/proof`,
      operationId: k.method,
      method: k.method,
      request: (p: Record<string, string>) => ({ params: { [k.param]: p[k.arg] ?? '' }, query: {} }),
      summary: summary(k.kind),
      params: z.strictObject({ [k.param]: pathId.describe(`the ${k.noun} (a UUID)`) }),
      notFound: `no ${k.noun} has this id, or it is not in a signed tree of the audit log yet`,
      conflict: 'leaves or subtree roots the proof needs are missing from the stored log (removed with SQL): it no longer holds what its signed head covers (tool-audit verify names the range)',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => {
        const id = params[k.param] as string;
        return proven(`${k.kind} ${id}`, uuidSchema.safeParse(id).success ? await k.prove(qs, id) : { why: 'unknown' });
      },
    }),
  );
}
