/**
 * The read API from the browser: the same routes, parameters and auth as every other client.
 * With API keys configured the server answers 401 without a key; the page then asks for one
 * (kept in sessionStorage for this tab only), sends it as `Authorization: Bearer`, and shows
 * no data until a key with the `read` scope is accepted.
 */
import { el } from './dom.ts';

const STORAGE_KEY = 'tool-audit.api-key';

/** An answer the page cannot use (other than a missing key, which prompts). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let pending: Promise<void> | undefined;

/** The key this tab uses, if any. */
export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** Forgets the key (the header's "forget key" button). */
export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** GET a read route; prompts for a key (once for all concurrent requests) on 401/403 and retries. */
export async function getJson<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) qs.set(k, String(v));
  const url = qs.size ? `${path}?${qs}` : path;
  for (;;) {
    const key = storedKey();
    const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    if (res.status === 401 || res.status === 403) {
      const body = (await res.json().catch(() => ({}))) as { message?: string };
      if (key) forgetKey();
      pending ??= askForKey(key ? (body.message ?? 'the key was refused') : null).finally(() => (pending = undefined));
      await pending;
      continue;
    }
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as { message?: string };
      throw new ApiError(res.status, `${path} answered ${res.status}: ${body.message ?? res.statusText}`);
    }
    return (await res.json()) as T;
  }
}

/**
 * POST to a route with the tab's key (a write, e.g. a quarantine replay, which needs its own scope):
 * a refused key is an error to show, not a reason to ask for another — the key may read but not write.
 */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const key = storedKey();
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
  const answer = (await res.json().catch(() => ({}))) as T & { message?: string };
  if (!res.ok) throw new ApiError(res.status, `${path} answered ${res.status}: ${answer.message ?? res.statusText}`);
  return answer;
}

/** Paths the server publishes (GET /openapi.json is public), for sections that need a route. */
export async function publishedPaths(): Promise<Set<string>> {
  const res = await fetch('/openapi.json');
  if (!res.ok) return new Set();
  const doc = (await res.json()) as { paths?: Record<string, unknown> };
  return new Set(Object.keys(doc.paths ?? {}));
}

/** Shows the key dialog; resolves once a key was entered (whether it is valid is the retry's business). */
function askForKey(error: string | null): Promise<void> {
  return new Promise((resolve) => {
    const input = el('input', { type: 'password', id: 'api-key', name: 'api-key', autocomplete: 'off', required: true, minlength: 1 });
    const form = el(
      'form',
      { class: 'key-form' },
      el('h2', { id: 'key-title' }, 'API key required'),
      el('p', {}, 'This server requires an API key with the read scope. It is kept in this tab only.'),
      error ? el('p', { role: 'alert', class: 'error' }, `Refused: ${error}`) : null,
      el('label', { for: 'api-key' }, 'API key'),
      input,
      el('button', { type: 'submit' }, 'Use key'),
    );
    const dialog = el('div', { role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'key-title', class: 'key-dialog' }, form);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      sessionStorage.setItem(STORAGE_KEY, input.value.trim());
      dialog.remove();
      resolve();
    });
    document.body.append(dialog);
    input.focus();
  });
}
