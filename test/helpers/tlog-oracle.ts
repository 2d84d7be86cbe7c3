/**
 * The transparency-log oracle for tests: a small Go program (test/oracles/tlog) that checks
 * checkpoints (C2SP tlog-checkpoint signed notes), inclusion and consistency proofs and leaf
 * hashes with well-known implementations only — transparency-dev/merkle, x/mod's sumdb/note and
 * transparency-dev/formats — so the audit log's own Merkle and signing code is judged by code it
 * shares nothing with. Built once per test process into .services/tlog-oracle/ (ignored by git),
 * which later runs reuse until main.go, go.mod or go.sum change.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { createHash, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
const source = join(root, 'test/oracles/tlog');
const outDir = join(root, '.services/tlog-oracle');
const binary = join(outDir, 'tlog-oracle');

/** What the oracle is asked: every list optional (a missing one answers as an empty list). */
export interface TlogOracleInput {
  /** Trusted note verifier keys, "<name>+<8 hex key hash>+<base64(0x01 ‖ Ed25519 public key)>". */
  verifier_keys?: string[];
  /** The origin line every checkpoint must carry. */
  origin?: string;
  /** Whole signed notes: body, blank line, signature lines. */
  checkpoints?: string[];
  /** Hashes in hex; index is 0-based, size the tree size the path and root belong to. */
  inclusion?: Array<{ index: number; size: number; leaf_hash: string; path: string[]; root: string }>;
  consistency?: Array<{ size1: number; size2: number; root1: string; root2: string; proof: string[] }>;
  /** Checks RFC 6962 HashLeaf(UTF-8 bytes of data) == leaf_hash. */
  leaf_data?: Array<{ data: string; leaf_hash: string }>;
}

/** One check's verdict; error says why when ok is false. */
export interface TlogCheck {
  ok: boolean;
  error?: string;
}

/** A checkpoint's verdict: size, root (hex) and origin only when ok. */
export interface TlogCheckpointCheck extends TlogCheck {
  size?: number;
  root?: string;
  origin?: string;
  /** "<name>+<key hash hex>" of every trusted key whose signature verified on the note. */
  signed_by: string[];
}

/** The oracle's answer, each list in the order of the question's. */
export interface TlogOracleOutput {
  checkpoints: TlogCheckpointCheck[];
  inclusion: TlogCheck[];
  consistency: TlogCheck[];
  leaf_data: TlogCheck[];
}

/** The go command: on PATH, else the usual install location. */
function goBinary(): string | undefined {
  for (const candidate of ['go', '/usr/local/go/bin/go']) {
    const r = spawnSync(candidate, ['version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    if (r.status === 0 && r.stdout.startsWith('go version')) return candidate;
  }
  return undefined;
}

let goPath: string | undefined | null = null;

/** Whether a Go toolchain is present to build the oracle (tests skip the oracle without one). */
export function goAvailable(): boolean {
  if (goPath === null) goPath = goBinary();
  return goPath !== undefined;
}

let built: Promise<string> | undefined;

/** Builds the oracle unless the binary is newer than its sources; resolves to the binary's path. */
function build(): Promise<string> {
  built ??= (async () => {
    const newest = Math.max(...['main.go', 'go.mod', 'go.sum'].map((f) => statSync(join(source, f)).mtimeMs));
    if (existsSync(binary) && statSync(binary).mtimeMs >= newest) return binary;
    if (!goAvailable()) throw new Error('tlog oracle: no go toolchain (install Go 1.26, or put it on PATH)');
    mkdirSync(outDir, { recursive: true });
    // Built under a name of its own, then renamed: test files in parallel processes may build at
    // once, and none must run a half-written binary.
    const tmp = `${binary}.${process.pid}.tmp`;
    try {
      // -mod=readonly: go.sum is committed, so a fresh clone needs only the module proxy and a
      // stale go.sum fails loudly instead of being rewritten; -buildvcs=false: the module sits
      // inside this repository, whose git state is none of the binary's business.
      await promisify(execFile)(goPath as string, ['build', '-mod=readonly', '-buildvcs=false', '-o', tmp, '.'], {
        cwd: source,
        maxBuffer: 16 * 1024 * 1024,
      });
      renameSync(tmp, binary);
    } catch (e) {
      rmSync(tmp, { force: true });
      const err = e as { stderr?: string; message: string };
      throw new Error(`tlog oracle: go build failed: ${err.stderr || err.message}`, { cause: e });
    }
    return binary;
  })();
  // A failed build is not cached: the next call tries again (e.g. after the proxy came back).
  built.catch(() => (built = undefined));
  return built;
}

/**
 * Asks the Go oracle: builds it on first use (the first build downloads the modules through the
 * Go module proxy and compiles them, which can take a minute or more), runs it with the input on
 * stdin and returns its answer. Rejects when the oracle refuses the input (exit 2: malformed
 * JSON, unknown field, bad verifier key, non-hex hash) or fails.
 */
export async function tlogOracle(input: TlogOracleInput): Promise<TlogOracleOutput> {
  const bin = await build();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.once('error', reject);
    child.once('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (code !== 0) return reject(new Error(`tlog oracle exited ${code}${code === 2 ? ' (bad input)' : ''}: ${stderr}`));
      try {
        resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as TlogOracleOutput);
      } catch (e) {
        reject(new Error(`tlog oracle: unreadable answer: ${(e as Error).message}`));
      }
    });
    // A child that dies before reading stdin is reported by 'close' with its stderr; the pipe
    // error it causes here would say less.
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

/**
 * The note verifier key string for an Ed25519 public key, as golang.org/x/mod/sumdb/note writes
 * it: "<name>+<key hash, 8 hex digits>+<base64(0x01 ‖ 32-byte public key)>", the key hash being
 * the first 4 bytes (big-endian) of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key).
 *
 * The test's own, written from the note spec rather than taken from the project's signer, so
 * that a test can name a key to the oracle without trusting the code under test.
 */
export function noteVerifierKey(name: string, publicKey: KeyObject): string {
  // The note spec: a non-empty name without "+" or whitespace (it is a token on signature lines).
  if (name === '' || /[+\s\u0085]/u.test(name)) throw new Error(`note key name ${JSON.stringify(name)}: must be non-empty, without "+" or spaces`);
  if (publicKey.type !== 'public' || publicKey.asymmetricKeyType !== 'ed25519') throw new Error('noteVerifierKey: needs an Ed25519 public key');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const key = Buffer.concat([Buffer.from([0x01]), raw]);
  const hash = createHash('sha256').update(name).update('\n').update(key).digest().subarray(0, 4);
  return `${name}+${hash.toString('hex')}+${key.toString('base64')}`;
}
