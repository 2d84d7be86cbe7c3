/**
 * The price table a model turn's cost is computed from when its producer reported none: list
 * prices in USD per million tokens, by model name prefix (the longest matching prefix wins, so
 * `gpt-4o-mini` is not priced as `gpt-4o`). Pure data; ingest applies it (ingest/decode-packet.ts)
 * after the turn's fingerprint is taken, so a turn re-sent after this table changed is still the
 * same turn, stored once, at the price of its first arrival.
 *
 * Source: the providers' public pricing pages (openai.com/api/pricing,
 * anthropic.com/pricing, ai.google.dev/gemini-api/docs/pricing), standard tier, no batch
 * discount, as written down on {@link PRICES_AS_OF}. Prices change: a turn whose producer reports
 * its cost (`tool_audit.cost_usd`, OpenInference `llm.cost.total`) is stored at that cost.
 */

/** The day the prices below were written down. */
export const PRICES_AS_OF = '2026-11-28';

/** One model's price, USD per million tokens. `cachedInput` applies to the input tokens read from the provider's prompt cache. */
export interface ModelPrice {
  input: number;
  output: number;
  cachedInput?: number;
}

/** Model name prefix → price. */
export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'o3': { input: 2, output: 8, cachedInput: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cachedInput: 0.08 },
  'claude-3-5-sonnet': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-3-7-sonnet': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-sonnet-4': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-opus-4': { input: 15, output: 75, cachedInput: 1.5 },
  'gemini-1.5-flash': { input: 0.075, output: 0.3 },
  'gemini-1.5-pro': { input: 1.25, output: 5 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cachedInput: 0.31 },
};

/** A provider prefix some instrumentations put before the model (`openai/gpt-4o`, `models/gemini-1.5-pro`). */
const PROVIDER_PREFIX = /^(?:[a-z0-9_-]+\/)+/i;

/** The price of a model by its longest listed prefix, or undefined when none is listed. */
export function priceOf(model: string): ModelPrice | undefined {
  const name = model.replace(PROVIDER_PREFIX, '').toLowerCase();
  let best: string | undefined;
  for (const prefix of Object.keys(MODEL_PRICES)) if (name.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  return best === undefined ? undefined : MODEL_PRICES[best];
}

/**
 * The cost of a turn from the table, or null when the model is not listed or a token count is
 * unknown. Cached input tokens are part of the input tokens, charged at the cached price.
 */
export function tableCost(model: string, t: { input: number | null; output: number | null; cachedInput: number | null }): number | null {
  const p = priceOf(model);
  if (!p || t.input === null || t.output === null) return null;
  const cached = Math.min(t.cachedInput ?? 0, t.input);
  const usd = ((t.input - cached) * p.input + cached * (p.cachedInput ?? p.input) + t.output * p.output) / 1_000_000;
  // Rounded to a millionth of a cent: a sum of float products is no more precise than that.
  return Math.round(usd * 1e8) / 1e8;
}
