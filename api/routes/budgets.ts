/**
 * Budget write routes (reads are in read-route-table.ts):
 *  - PUT /v1/budgets (`admin` scope): the whole set as a JSON array, stored as a new version and
 *    put in force; a bad set is refused whole (400) with every offence named.
 *  - POST /v1/budget/check (`ingest` scope: the emitters that ask hold ingest keys, and a check
 *    reserves spend the way a packet records it; a read key only looks): allow, warn or deny
 *    over every budget whose scope matches, answered from memory; the decision is recorded.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKey } from '../../platform/config.ts';
import type { Budget } from '../../queries/budgets/math.ts';
import { parseBudgetSet } from '../../queries/budgets/schemas.ts';
import { keyIdOf, requireScope } from '../auth.ts';
import type { BudgetService } from '../budgets/service.ts';
import { jsonBody, judgeCheckBody } from '../budgets/check-listener.ts';

const bad = (reply: FastifyReply, req: FastifyRequest, message: string) => reply.code(400).send({ error: 'bad_request', message, request_id: req.id });

/** Registers PUT /v1/budgets and POST /v1/budget/check. */
export function registerBudgetRoutes(app: FastifyInstance, deps: { budgets: BudgetService; apiKeys: ApiKey[] }): void {
  app.put('/v1/budgets', { preHandler: requireScope(deps.apiKeys, 'admin') }, async (req, reply) => {
    const body = jsonBody(req.body);
    if (!body.ok) return bad(reply, req, body.message);
    const set = parseBudgetSet(body.value);
    if (!set.ok) return bad(reply, req, `the budget set was refused whole: ${set.errors.join('; ')}`);
    const version = await deps.budgets.apply(set.budgets as Budget[], keyIdOf(req, deps.apiKeys));
    return reply.code(200).send({ version, budgets: set.budgets.length });
  });

  app.post('/v1/budget/check', { preHandler: requireScope(deps.apiKeys, 'ingest') }, async (req, reply) => {
    const judged = judgeCheckBody(req.body);
    if (!judged.ok) return bad(reply, req, judged.message);
    return reply.code(200).send(await deps.budgets.check(judged.req, keyIdOf(req, deps.apiKeys)));
  });
}
