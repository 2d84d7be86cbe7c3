/**
 * The two sinks: HTTP against a real local server, Kafka against a recording stand-in for
 * the kafkajs client (the real broker path is covered by the integration tests).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kafka, ProducerConfig, ProducerRecord } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditEmitter, createHttpTransport, createKafkaTransport, DeliveryError } from '../../../emit/index.ts';

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe('HTTP transport', () => {
  const seen: Seen[] = [];
  let reply: (body: string) => { status: number; body: string } = () => ({ status: 200, body: '{}' });
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      const r = reply(body);
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.body);
    });
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const batch = [
    { key: 'task-1', value: '{"type":"tool_call","n":1}' },
    { key: 'task-1', value: '{"type":"tool_call","n":2}' },
  ];

  it('POSTs NDJSON to /v1/packets with the bearer key', async () => {
    seen.length = 0;
    reply = () => ({ status: 200, body: JSON.stringify({ accepted: 2, rejected: 0, results: [{ status: 'accepted' }, { status: 'duplicate' }] }) });
    const t = createHttpTransport({ url, apiKey: 'k'.repeat(20) });
    await expect(t.send(batch)).resolves.toEqual({ rejected: 0, reasons: [] });
    expect(seen).toMatchObject([{ method: 'POST', url: '/v1/packets', body: `${batch[0]?.value}\n${batch[1]?.value}` }]);
    expect(seen[0]?.headers).toMatchObject({ authorization: `Bearer ${'k'.repeat(20)}`, 'content-type': 'application/x-ndjson' });
  });

  it('a 200 with rejected packets reports them instead of failing', async () => {
    reply = () => ({ status: 200, body: JSON.stringify({ results: [{ status: 'accepted' }, { status: 'rejected', reason: 'I5 args_hash' }] }) });
    await expect(createHttpTransport({ url }).send(batch)).resolves.toEqual({ rejected: 1, reasons: ['I5 args_hash'] });
  });

  it.each([
    [500, true],
    [503, true],
    [429, true],
    [408, true],
    [400, false],
    [401, false],
    [403, false],
    [413, false],
  ])('status %i fails with retryable=%s', async (status, retryable) => {
    reply = () => ({ status, body: '{"error":"x"}' });
    const err = await createHttpTransport({ url }).send(batch).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err).toMatchObject({ retryable });
  });

  it('an unreachable server is a retryable failure', async () => {
    const err = await createHttpTransport({ url: 'http://127.0.0.1:1', requestTimeoutMs: 2000 }).send(batch).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'DeliveryError', retryable: true });
  });

  it('an emitter over HTTP delivers and counts server-side rejections without resending', async () => {
    seen.length = 0;
    reply = (body) => {
      const lines = body.split('\n');
      return { status: 200, body: JSON.stringify({ results: lines.map((_, i) => ({ status: i === 0 ? 'rejected' : 'accepted', reason: 'test' })) }) };
    };
    const emitter = createAuditEmitter({ http: { url }, orchestrator: 'gateway', agentId: 'L', buffer: { lingerMs: 1 } });
    await emitter.invoke('t', { q: 1 }, async () => 'result');
    await emitter.close(2000);
    expect(seen).toHaveLength(1);
    expect(emitter.stats()).toEqual({ enqueued: 2, delivered: 1, rejected: 1, dropped: 0, failedBatches: 0, buffered: 0 });
  });
});

/** A recording stand-in for kafkajs' Kafka client. */
function fakeKafka(opts: { connectFailures?: number; sendError?: () => Error } = {}) {
  const log = { producerConfig: undefined as ProducerConfig | undefined, connects: 0, disconnects: 0, records: [] as ProducerRecord[] };
  let connectFailures = opts.connectFailures ?? 0;
  const producer = {
    events: { DISCONNECT: 'producer.disconnect' },
    on: () => () => {},
    connect: async () => {
      log.connects++;
      if (connectFailures-- > 0) throw Object.assign(new Error('Connection error: ECONNREFUSED'), { name: 'KafkaJSConnectionError', retriable: true });
    },
    send: async (record: ProducerRecord) => {
      if (opts.sendError) throw opts.sendError();
      log.records.push(record);
      return [];
    },
    disconnect: async () => {
      log.disconnects++;
    },
  };
  const kafka = {
    producer: (config: ProducerConfig) => {
      log.producerConfig = config;
      return producer;
    },
  } as unknown as Kafka;
  return { kafka, log };
}

describe('Kafka transport', () => {
  const batch = [{ key: 'task-1', value: '{"n":1}' }];

  it('connects lazily and produces with acks -1, no compression, not idempotent, to tool_audit.packets by default', async () => {
    const { kafka, log } = fakeKafka();
    const t = createKafkaTransport({ kafka });
    expect(log.connects).toBe(0);
    expect(log.producerConfig).toMatchObject({ idempotent: false, maxInFlightRequests: 1 });
    await t.send(batch);
    await t.send(batch);
    expect(log.connects).toBe(1);
    expect(log.records[0]).toEqual({ topic: 'tool_audit.packets', acks: -1, compression: 0, timeout: 30_000, messages: [{ key: 'task-1', value: '{"n":1}' }] });
    await t.close();
    expect(log.disconnects).toBe(1);
  });

  it('a failed connect is retried on the next send', async () => {
    const { kafka, log } = fakeKafka({ connectFailures: 1 });
    const t = createKafkaTransport({ kafka, topic: 'audit.test' });
    await expect(t.send(batch)).rejects.toMatchObject({ name: 'DeliveryError', retryable: true });
    await t.send(batch);
    expect(log.connects).toBe(2);
    expect(log.records.map((r) => r.topic)).toEqual(['audit.test']);
  });

  it('a record Kafka refuses is not retryable; other produce errors are', async () => {
    const tooLarge = () => Object.assign(new Error('retries exceeded'), { cause: Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' }) });
    await expect(createKafkaTransport({ kafka: fakeKafka({ sendError: tooLarge }).kafka }).send(batch)).rejects.toMatchObject({ retryable: false });
    const notLeader = () => Object.assign(new Error('not leader'), { type: 'NOT_LEADER_FOR_PARTITION' });
    await expect(createKafkaTransport({ kafka: fakeKafka({ sendError: notLeader }).kafka }).send(batch)).rejects.toMatchObject({ retryable: true });
  });

  it('close without a connection does not connect', async () => {
    const { kafka, log } = fakeKafka();
    await createKafkaTransport({ kafka }).close();
    expect(log).toMatchObject({ connects: 0, disconnects: 0 });
  });

  it('needs a client or brokers', () => {
    expect(() => createKafkaTransport({})).toThrow(/brokers/);
  });
});
