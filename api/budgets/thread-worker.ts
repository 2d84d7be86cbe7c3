/**
 * The budget thread (worker side): the process's {@link BudgetDesk}, answering the main thread's
 * messages (api/budgets/thread.ts) and, with BUDGET_CHECK_PORT, its own check listener. Checks
 * from either door meet the same ledger on this one thread, in one synchronous step each.
 */
import { createServer, type Server } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { SPEND_LOAD_SEEN_MS } from '../../queries/budgets/ledger.ts';
import { BudgetDesk } from './desk.ts';
import { checkListener } from './check-listener.ts';
import type { ThreadNote, ThreadReply, ThreadRequest, ThreadOptions } from './thread.ts';

const port = parentPort;
if (!port) throw new Error('budget-thread-worker runs only as a worker thread');
const o = workerData as ThreadOptions;
// One 'decided' message per batch: the main thread takes them all at its next flush.
const desk = new BudgetDesk(o.reservationTimeoutMs, () => port.postMessage({ op: 'decided' } satisfies ThreadReply), o.seenForMs ?? SPEND_LOAD_SEEN_MS);
let server: Server | undefined;

async function listen(): Promise<number | null> {
  if (!o.listen) return null;
  const handler = checkListener({
    apiKeys: o.apiKeys,
    maxBodyBytes: o.maxBodyBytes,
    ...(o.edgeLimits ? { edgeLimits: o.edgeLimits } : {}),
    check: (req, keyId) => desk.check(req, keyId, Date.now()),
  });
  server = createServer({ keepAliveTimeout: 72_000 }, handler);
  const s = server;
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(o.listen?.port, o.listen?.host, () => resolve());
  });
  const addr = s.address();
  return typeof addr === 'object' && addr ? addr.port : null;
}

async function answer(m: ThreadRequest): Promise<unknown> {
  switch (m.op) {
    case 'begin':
      return desk.beginLoad(m.budgets);
    case 'cancel':
      return desk.cancelLoad();
    case 'load':
      desk.setBudgets(m.state, Date.now());
      return { port: await listen() };
    case 'set':
      return desk.setBudgets(m.state, Date.now());
    case 'check':
      return desk.check(m.req, m.keyId, Date.now());
    case 'list':
      return desk.list(Date.now());
    case 'take':
      return desk.takeDecisions();
    case 'stop':
      // In-flight checks finish; idle keep-alive sockets are closed rather than waited for.
      await new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      return undefined;
  }
}

port.on('message', (m: ThreadRequest | ThreadNote) => {
  if (m.op === 'calls') return desk.recordCalls(m.calls);
  answer(m).then(
    (value) => port.postMessage({ op: 'answer', id: m.id, value } satisfies ThreadReply),
    (err: unknown) => port.postMessage({ op: 'answer', id: m.id, error: (err as Error).message ?? String(err) } satisfies ThreadReply),
  );
});
