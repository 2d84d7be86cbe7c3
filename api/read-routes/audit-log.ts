/**
 * Read routes of the audit log: a record's proof of inclusion, the signed heads and their
 * consistency.
 */
import { z } from 'zod';
import { uuidSchema } from '../../schemas/common.ts';
import { consistencyProofSchema, inclusionProofSchema, logHeadsSchema, type InclusionProof, type LogHeadsParams, type NoProof } from '../../queries/audit-log-proof.ts';
import { notFound } from '../../platform/errors.ts';
import { intParam, pathId } from '../read-params.ts';
import { readRoute, type ReadRoute } from './route.ts';

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
  return [
    readRoute({
      url: '/v1/calls/:call_id/proof',
      operationId: 'callProof',
      method: 'callProof',
      request: (p: { callId: string }) => ({ params: { call_id: p.callId }, query: {} }),
      summary: summary('tool_call'),
      params: z.strictObject({ call_id: pathId.describe('the call (a UUID)') }),
      notFound: 'no call has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`tool_call ${params.call_id}`, uuidSchema.safeParse(params.call_id).success ? await qs.callProof({ callId: params.call_id }) : { why: 'unknown' }),
    }),
    readRoute({
      url: '/v1/outputs/:output_id/proof',
      operationId: 'outputProof',
      method: 'outputProof',
      request: (p: { outputId: string }) => ({ params: { output_id: p.outputId }, query: {} }),
      summary: summary('output'),
      params: z.strictObject({ output_id: pathId.describe('the output (a UUID)') }),
      notFound: 'no output has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`output ${params.output_id}`, uuidSchema.safeParse(params.output_id).success ? await qs.outputProof({ outputId: params.output_id }) : { why: 'unknown' }),
    }),
    readRoute({
      url: '/v1/turns/:turn_id/proof',
      operationId: 'turnProof',
      method: 'turnProof',
      request: (p: { turnId: string }) => ({ params: { turn_id: p.turnId }, query: {} }),
      summary: summary('model turn'),
      params: z.strictObject({ turn_id: pathId.describe('the model turn (a UUID)') }),
      notFound: 'no model turn has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`model turn ${params.turn_id}`, uuidSchema.safeParse(params.turn_id).success ? await qs.turnProof({ turnId: params.turn_id }) : { why: 'unknown' }),
    }),
    readRoute({
      url: '/v1/runs/:run_id/proof',
      operationId: 'runProof',
      method: 'runProof',
      request: (p: { runId: string }) => ({ params: { run_id: p.runId }, query: {} }),
      summary: summary('agent run'),
      params: z.strictObject({ run_id: pathId.describe('the agent run (a UUID)') }),
      notFound: 'no agent run has this id, or it is not in a signed tree of the audit log yet',
      query: z.strictObject({}),
      response: inclusionProofSchema,
      run: async (qs, { params }) => proven(`agent run ${params.run_id}`, uuidSchema.safeParse(params.run_id).success ? await qs.runProof({ runId: params.run_id }) : { why: 'unknown' }),
    }),
  ];
}
