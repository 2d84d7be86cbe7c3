import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const read = (f: string) => readFileSync(new URL(f, root), 'utf8');

describe('docker-compose.yml', () => {
  it('pins the same Kafka version the tests assemble from Maven Central', () => {
    const script = /KAFKA_VERSION="\$\{TOOL_AUDIT_KAFKA_VERSION:-([0-9.]+)\}"/.exec(read('scripts/kafka-services.sh'))?.[1];
    const compose = /image: apache\/kafka:([0-9.]+)/.exec(read('docker-compose.yml'))?.[1];
    expect(script).toMatch(/^\d+\.\d+\.\d+$/);
    expect(compose).toBe(script);
  });
});
