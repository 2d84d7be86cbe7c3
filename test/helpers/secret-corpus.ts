/**
 * A corpus of realistic fake secrets in the places they occur, and near-misses that must stay as
 * they are: shared by the detectors' unit tests and the test that the Python emitter redacts
 * exactly as the TypeScript code does. Fake keys are assembled here so that no scanner mistakes
 * this file for a leak.
 */
export const rep = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
export const b64 = (s: string) => Buffer.from(s).toString('base64');
export const b64url = (s: string) => Buffer.from(s).toString('base64url');
export const JWT = `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url('{"sub":"1234567890","name":"Zoë"}')}.${rep('Sf1KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c', 43)}`;
export const PEM = ['-----BEGIN RSA PRIVATE KEY-----', rep('MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun', 64), rep('VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW', 64), '-----END RSA PRIVATE KEY-----'].join('\n');

/** [rule, the text, the secret inside it]. */
export const FOUND: Array<[string, string, string]> = [
  ['anthropic_key', `{"api_key": "sk-ant-api03-${rep('a1B2c3D4e5', 93)}AA"}`, `sk-ant-api03-${rep('a1B2c3D4e5', 93)}AA`],
  ['openai_key', `OPENAI_API_KEY=sk-proj-${rep('Xy7Qw3Lm9Pz2', 48)}`, `sk-proj-${rep('Xy7Qw3Lm9Pz2', 48)}`],
  ['openai_key', `key sk-${rep('T3BlbkFJ9aZ', 48)} here`, `sk-${rep('T3BlbkFJ9aZ', 48)}`],
  ['aws_access_key', 'aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE'],
  ['aws_secret_key', 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
  ['github_token', `git clone https://x:ghp_${rep('A1b2C3d4E5', 36)}@github.com/o/r`, `ghp_${rep('A1b2C3d4E5', 36)}`],
  ['github_token', `token github_pat_11${rep('ABCDEFG0123456789_xyz', 80)}`, `github_pat_11${rep('ABCDEFG0123456789_xyz', 80)}`],
  ['slack_token', `SLACK_BOT_TOKEN=xoxb-${rep('1234567890', 12)}-${rep('abcdefghijKLMNOP', 24)}`, `xoxb-${rep('1234567890', 12)}-${rep('abcdefghijKLMNOP', 24)}`],
  ['google_api_key', `https://maps.googleapis.com/maps/api/geocode/json?key=AIza${rep('SyD-9tSrke72PouQMnMX_2', 35)}&address=x`, `AIza${rep('SyD-9tSrke72PouQMnMX_2', 35)}`],
  ['stripe_key', `stripe.api_key = "sk_live_${rep('4eC39HqLyjWDarjtT1zdp7dc', 24)}"`, `sk_live_${rep('4eC39HqLyjWDarjtT1zdp7dc', 24)}`],
  ['basic_auth', `Authorization: Basic ${b64('admin:s3cr3t!')}`, b64('admin:s3cr3t!')],
  ['bearer_token', `{"headers": {"Authorization": "Bearer ${rep('ya29.a0AfH6SMBx9', 60)}"}}`, rep('ya29.a0AfH6SMBx9', 60)],
  ['jwt', `Authorization: Bearer ${JWT}`, JWT],
  ['private_key', `{"path": "id_rsa", "content": ${JSON.stringify(PEM)}}`.replace(/\\n/g, '\n'), PEM],
  ['url_password', 'postgresql://app_user:Tr0ub4dor&3@db.internal:5432/prod', 'Tr0ub4dor&3'],
  ['url_password', 'redis://:hunter2hunter2@cache:6379/0'.replace('//:', '//default:'), 'hunter2hunter2'],
  ['connection_password', 'Server=tcp:db,1433;Database=x;User Id=sa;Password=P@ssw0rd!2026;Encrypt=yes', 'P@ssw0rd!2026'],
  ['connection_password', 'host=db dbname=app user=app password="c0rrect-h0rse"', 'c0rrect-h0rse'],
  ['card_number', '{"card": "4111 1111 1111 1111", "cvc": "123"}', '4111 1111 1111 1111'],
  ['card_number', 'charge 5555-5555-5555-4444 now', '5555-5555-5555-4444'],
  ['card_number', 'amex 378282246310005', '378282246310005'],
];

/** Text that looks close but holds no secret. */
export const NEAR_MISSES = [
  'use scikit-learn (sk-learn) for the task-12345 report',
  'sk-ant-short',
  'AKIA0123456789ABCDE (15 characters after AKIA)',
  'ghp_tooShort and github_pat_x',
  'the Bearer of bad news; Bearer token-based-authentication',
  'Basic authentication is described in RFC 7617',
  'eyJhbGciOiJIUzI1NiJ9 (a JWT header alone)',
  `${b64url('{"typ":"text"}')}.${b64url('{"a":1}')}.${rep('x', 20)}`,
  '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----',
  '-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----',
  'http://example.com:8080/path and mailto:user@example.com and ssh://git@github.com/o/r',
  'the password policy says: at least 12 characters; password reset link',
  'order 4111 1111 1111 1112 (Luhn fails), phone +1 555 0100 2000, epoch ms 1795663084858',
  'created 2026-11-22T10:00:00Z, id 3b241101-e2bb-4255-8caf-4136c566a962, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
];


/**
 * Call args in the shapes agents send secrets in, none of which the string detectors alone
 * caught: [what, args, the secrets planted, where each redaction is and by which rule].
 */
export const SHAPES: Array<[string, Record<string, unknown>, string[], Array<[pointer: string, rule: string]>]> = [
  ['a value under a secret key', { user: 'ana', password: 'hunter2' }, ['hunter2'], [['/password', 'secret_name']]],
  ['a nested short key', { db: { user: 'app', pass: 'Tr0ub4dor&3' } }, ['Tr0ub4dor&3'], [['/db/pass', 'secret_name']]],
  ['a [name, value] header pair', { headers: [['X-Api-Key', 'q8f7Zk2LmN4pR6sT9vW1xY3a'], ['Accept', 'text/html']] }, ['q8f7Zk2LmN4pR6sT9vW1xY3a'], [['/headers/0/1', 'secret_name']]],
  ['a {name, value} header', { headers: [{ name: 'Authorization', value: 'opaque-credential-2026' }, { name: 'Accept', value: 'text/html' }] }, ['opaque-credential-2026'], [['/headers/0/value', 'secret_name']]],
  ['camelCase and a number', { clientSecret: 'cs_9f8e7d6c', apiKey: 123456789, max_tokens: 4096, nextPageToken: 'CAUQAA' }, ['cs_9f8e7d6c', '123456789'], [['/apiKey', 'secret_name'], ['/clientSecret', 'secret_name']]],
  ['a whole credentials object', { credentials: { user: 'svc', secret_value: 'zz-41-qq', ttl: 3600 } }, ['zz-41-qq', 'svc'], [['/credentials/secret_value', 'secret_name'], ['/credentials/ttl', 'secret_name'], ['/credentials/user', 'secret_name']]],
  ['a URL password without a user', { url: 'redis://:s3cretpw@cache:6379/0' }, ['s3cretpw'], [['/url', 'url_password']]],
  ['basic in lower case', { note: `curl -H "authorization: basic ${b64('user:password')}" https://api` }, [b64('user:password')], [['/note', 'basic_auth']]],
  ['a bearer token without digits', { note: 'sent Bearer abcdefGHIJKLmnopqrSTUVwx to the API' }, ['abcdefGHIJKLmnopqrSTUVwx'], [['/note', 'bearer_token']]],
  ['a card number as a JSON number', { amount: 12.5, card: 4111111111111111 }, ['4111111111111111'], [['/card', 'card_number']]],
  ['provider keys', { hf: `hf_${rep('aBcDeFgHiJ', 34)}`, sg: `SG.${rep('aB3dE5gH7j', 22)}.${rep('kL9mN0pQ1r', 43)}`, conn: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${rep('Zm9vYmFy', 86)}==;EndpointSuffix=core.windows.net` }, [`hf_${rep('aBcDeFgHiJ', 34)}`, `SG.${rep('aB3dE5gH7j', 22)}.${rep('kL9mN0pQ1r', 43)}`, rep('Zm9vYmFy', 86)], [['/conn', 'azure_storage_key'], ['/hf', 'huggingface_token'], ['/sg', 'sendgrid_key']]],
  ['a secret as an object key', { [`ghp_${rep('Q1w2E3r4T5', 36)}`]: { scopes: ['repo'] } }, [`ghp_${rep('Q1w2E3r4T5', 36)}`], [['/KEY', 'github_token']]],
  ['an assignment in a shell command', { cmd: 'export OPENAI_API_KEY=abc123def456ghi789 && DB_PASSWORD="pa55-word" ./run --api-token tkn-000111 --max-tokens 100' }, ['abc123def456ghi789', 'pa55-word', 'tkn-000111'], [['/cmd', 'secret_assignment']]],
];
