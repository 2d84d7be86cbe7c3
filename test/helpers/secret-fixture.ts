/**
 * The secrets fixture every entry path is tested with: at least 150 realistic fake secrets in at
 * least 40 shapes, as tool args carry them — the detectors' corpus (one per kind), one credential
 * per provider shape and a second of each in a config text, the shapes agents send (names, header
 * pairs, numbers, object keys, shell assignments) bare and as JSON text inside a string, and whole
 * files: environment dumps, cloud credential files, a service account, a kubeconfig, .netrc, DSNs,
 * HTTP header dumps, shell commands, PEM keys. Each item is the args of one call and the secrets planted in them.
 */
import { FOUND, INSIDE, PEM, PROVIDER_FOUND, rep, SHAPES } from './secret-corpus.ts';
import { PROVIDER_RULES } from '../../schemas/secret-providers.ts';

/** One call's args and what is secret in them. */
export interface PlantedSecrets {
  shape: string;
  args: Record<string, unknown>;
  secrets: string[];
}

/** A second credential of the same shape: its digits changed outside the provider's literals (never to 1: some alphabets lack it). */
function variant(rule: string, secret: string): string {
  const literals = PROVIDER_RULES.find((r) => r.rule === rule)?.need ?? [];
  const kept = new RegExp(literals.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|') || '(?!)', 'g');
  return secret
    .split(kept)
    .map((part) => part.replace(/[0-9]/g, (d) => '5678902345'[Number(d)] as string))
    .reduce((out, part, i) => out + (i > 0 ? ((secret.match(kept) ?? [])[i - 1] ?? '') : '') + part, '');
}

const AWS_ID = ['AKIA', 'Q3EGRX7Z5N2KJW4M'].join('');
const AWS_SECRET = rep('Wq8/Lm3+Zp6tYv9Kd2Hs5', 40);
const SESSION = rep('IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ', 220);
const EC_PEM = ['-----BEGIN EC PRIVATE KEY-----', rep('MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5m/d', 64), rep('oAoGCCqGSM49AwEHoUQDQgAE', 40), '-----END EC PRIVATE KEY-----'].join('\n');
const SSH_PEM = ['-----BEGIN OPENSSH PRIVATE KEY-----', rep('b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB', 70), '-----END OPENSSH PRIVATE KEY-----'].join('\n');
const PKCS8 = ['-----BEGIN ENCRYPTED PRIVATE KEY-----', rep('MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI', 64), '-----END ENCRYPTED PRIVATE KEY-----'].join('\n');
const KUBE_JWT = ['eyJhbGciOiJSUzI1NiIsImtpZCI6Imt1YmUifQ', rep('eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0', 60), rep('Kub3Sig_n4tur3-xYz', 43)].join('.');

/** Whole files and command lines, each with several secrets. */
const FILES: PlantedSecrets[] = [
  {
    shape: 'an environment dump',
    args: { env: `PATH=/usr/local/bin:/usr/bin\nHOME=/home/app\nDATABASE_URL=postgres://app:Pg-Pa55w0rd-77@db:5432/app\nREDIS_URL=redis://:R3d1s-pw-88@cache:6379/0\nSTRIPE_SECRET_KEY=sk_live_${rep('51Hx9EnvDump', 40)}\nJWT_SECRET=jwt-s3cr3t-v4lu3-2026\nSESSION_SECRET="s3ss10n-S3cr3t-Xy"\nNODE_ENV=production\n` },
    secrets: ['Pg-Pa55w0rd-77', 'R3d1s-pw-88', `sk_live_${rep('51Hx9EnvDump', 40)}`, 'jwt-s3cr3t-v4lu3-2026', 's3ss10n-S3cr3t-Xy'],
  },
  {
    shape: 'an AWS credentials file',
    args: { path: '~/.aws/credentials', content: `[default]\naws_access_key_id = ${AWS_ID}\naws_secret_access_key = ${AWS_SECRET}\n\n[prod]\naws_access_key_id=${AWS_ID.replace('Q3', 'R4')}\naws_secret_access_key=${AWS_SECRET.replace('Wq8', 'Xr9')}\naws_session_token = ${SESSION}\n` },
    secrets: [AWS_ID, AWS_SECRET, AWS_ID.replace('Q3', 'R4'), AWS_SECRET.replace('Wq8', 'Xr9'), SESSION],
  },
  {
    shape: 'a GCP service account (JSON value)',
    args: { credentials_json: { type: 'service_account', project_id: 'agent-prod', private_key_id: 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0', private_key: PEM, client_email: 'agent@agent-prod.iam.gserviceaccount.com' } },
    secrets: [PEM.split('\n')[1] as string],
  },
  {
    shape: 'a kubeconfig',
    args: { file: `apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: ${rep('LS0tLS1CRUdJTiBSU0EgS2V5RGF0YQ', 120)}\n- name: sa\n  user:\n    token: ${KUBE_JWT}\n` },
    secrets: [rep('LS0tLS1CRUdJTiBSU0EgS2V5RGF0YQ', 120), KUBE_JWT],
  },
  {
    shape: 'a .netrc',
    args: { netrc: `machine github.com login bot password N3trc-G1tHub-Pw\nmachine ftp.example.com\n  login anonymous\n  password Ftp-Pa55-netrc\n` },
    secrets: ['N3trc-G1tHub-Pw', 'Ftp-Pa55-netrc'],
  },
  {
    shape: 'DSNs',
    args: {
      jdbc: 'jdbc:postgresql://db:5432/app?user=app&password=Jdbc-Pw-555&ssl=true',
      mongo: 'mongodb+srv://admin:M0ng0-Pw-999@cluster0.abcde.mongodb.net/db?retryWrites=true',
      amqp: 'amqp://guest:Rabb1t-Pw-42@mq:5672/vhost',
      smtp: 'smtps://mailer:Smtp-Pw-2026@smtp.example.com:465',
    },
    secrets: ['Jdbc-Pw-555', 'M0ng0-Pw-999', 'Rabb1t-Pw-42', 'Smtp-Pw-2026'],
  },
  {
    shape: 'an HTTP request dump',
    args: { request: `GET /v1/orders HTTP/1.1\nHost: api.example.com\nAuthorization: Bearer ${rep('tok_HttpDump9Zx', 40)}\nX-Api-Key: ${rep('k3yHdr7Qw', 32)}\nCookie: session=${rep('S3ss1onC00k1e', 40)}\nAccept: application/json\n` },
    secrets: [rep('tok_HttpDump9Zx', 40), rep('k3yHdr7Qw', 32), `session=${rep('S3ss1onC00k1e', 40)}`],
  },
  {
    shape: 'shell commands',
    args: {
      script: `set -e\nPGPASSWORD='Psql-Pw-7788' psql -h db -U app -c 'select 1'\nmysql -h db -u root -pMy5ql-Sh3ll-Pw app < dump.sql\nsshpass -p 'Ssh-Pa55-Pw' ssh deploy@host uptime\ncurl -u ci:Curl-Sh3ll-Pw https://ci.example.com/api\ndocker login -u ci -p D0ck3r-Sh3ll-Pw ghcr.io\n`,
    },
    secrets: ['Psql-Pw-7788', 'My5ql-Sh3ll-Pw', 'Ssh-Pa55-Pw', 'Curl-Sh3ll-Pw', 'D0ck3r-Sh3ll-Pw'],
  },
  {
    shape: 'a YAML config',
    args: { config: `database:\n  host: db\n  password: "Yaml-Db-Pw-111"\nsmtp:\n  user: mailer\n  pass: Yaml-Smtp-Pw-222\nservices:\n  openai:\n    api_key: ${rep('Yml0p3nAIk3y', 32)}\n` },
    secrets: ['Yaml-Db-Pw-111', 'Yaml-Smtp-Pw-222', rep('Yml0p3nAIk3y', 32)],
  },
  {
    shape: 'PEM private keys',
    args: { files: [{ name: 'ec.pem', content: EC_PEM }, { name: 'id_ed25519', content: SSH_PEM }, { name: 'key.p8', content: PKCS8 }] },
    secrets: [EC_PEM.split('\n')[1] as string, SSH_PEM.split('\n')[1] as string, PKCS8.split('\n')[1] as string],
  },
  {
    shape: 'code holding credentials',
    args: { code: `import requests\nr = requests.get(url, headers={"Authorization": "token ghp_${rep('C0d3T0k3nXy', 36)}"})\nopenai.api_key = "sk-proj-${rep('C0d3Ap1K3y9', 48)}"\n` },
    secrets: [`ghp_${rep('C0d3T0k3nXy', 36)}`, `sk-proj-${rep('C0d3Ap1K3y9', 48)}`],
  },
];

/** Every planted item: at least 150 secrets in at least 40 shapes. */
export const SECRET_FIXTURE: PlantedSecrets[] = [
  ...FOUND.map(([rule, text, secret]): PlantedSecrets => ({ shape: `text: ${rule}`, args: { text }, secrets: [secret] })),
  ...PROVIDER_FOUND.map(([rule, text, secret]): PlantedSecrets => ({ shape: `provider: ${rule}`, args: { text }, secrets: [secret] })),
  // A second credential of each provider in its context, inside a JSON config sent as text.
  ...PROVIDER_FOUND.map(([rule, text, secret]): PlantedSecrets => {
    const other = variant(rule, secret);
    return { shape: `provider in a config text: ${rule}`, args: { config: JSON.stringify({ service: rule.split('_')[0], value: text.replace(secret, other), region: 'eu-west-1' }) }, secrets: [other] };
  }),
  ...SHAPES.map(([shape, args, secrets]): PlantedSecrets => ({ shape, args, secrets })),
  // The same shapes as JSON text inside a string: an MCP text block, OpenAI's arguments, a body
  // in a payload, pretty-printed text.
  ...INSIDE.flatMap(([where, wrap]) => SHAPES.map(([shape, args, secrets]): PlantedSecrets => ({ shape: `${shape}, in ${where}`, args: wrap(args), secrets }))),
  ...FILES,
];

/** Every planted secret long enough that finding it anywhere means it leaked (not a chance substring). */
export const FIXTURE_SECRETS: string[] = [...new Set(SECRET_FIXTURE.flatMap((p) => p.secrets))].filter((s) => s.length >= 7 && !/^\d{1,12}$/.test(s));
