/**
 * Serving the bundle: the app is built into a temporary folder and registered on a bare fastify
 * instance — every page URL answers index.html (deep links), assets are versioned, the CSP admits
 * this origin only, and the bundle names no other host (it works offline).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebBundle, webBundleStale, type WebManifest } from '../../../web/build.ts';
import { registerWebApp } from '../../../web/register.ts';

const dir = mkdtempSync(join(tmpdir(), 'tool-audit-web-bundle-'));
const app = Fastify();
let manifest: WebManifest;
beforeAll(async () => {
  manifest = await buildWebBundle(dir);
  registerWebApp(app, { dir });
}, 60_000);
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('web bundle', () => {
  it('answers every page URL with index.html under a same-origin CSP', async () => {
    for (const url of ['/', '/tasks', '/tasks/demo-1-0001', '/tools', '/tools/search%20web', '/waste']) {
      const r = await app.inject(url);
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['content-type']).toContain('text/html');
      expect(r.headers['content-security-policy']).toContain("default-src 'self'");
      expect(r.body).toContain(`/app/app.js?v=${manifest.version}`);
    }
  });

  it('serves the versioned assets, cacheable for good', async () => {
    const js = await app.inject('/app/app.js');
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('text/javascript');
    expect(js.headers['cache-control']).toContain('immutable');
    expect((await app.inject('/app/app.css')).statusCode).toBe(200);
    expect(manifest.bytes.js).toBeLessThan(600 * 1024);
  });

  it('names no other host: no CDN, font or script from elsewhere', () => {
    const text = ['index.html', 'app.js', 'app.css'].map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
    expect(text).not.toMatch(/<script[^>]+src=["']https?:|@import\s+url\(|fonts\.googleapis|cdn\.|unpkg|jsdelivr/i);
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).not.toMatch(/https?:\/\//);
  });

  it('knows when it is stale', () => {
    expect(webBundleStale(dir)).toBe(false);
    expect(webBundleStale(join(dir, 'missing'))).toBe(true);
  });
});
