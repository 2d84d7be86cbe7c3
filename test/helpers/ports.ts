/**
 * Ports for the servers tests start. Below the kernel's ephemeral range (32768–60999 here, Linux's
 * default): a random port inside it can already be held by any process's outgoing connection
 * (Kafka clients, fetch), which with three test files at a time made `listen` fail with
 * EADDRINUSE now and then. Below it only another test's pick can collide.
 */
export function testPort(): number {
  return 20_000 + Math.floor(Math.random() * 12_700);
}
