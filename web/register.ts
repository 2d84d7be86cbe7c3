/**
 * Serves the built web app from the API's own fastify instance (no second server): every page
 * URL answers index.html (the app routes in the browser), /app/* the bundle. The files are read
 * once at start and kept in memory (three small files). The pages themselves are public — they
 * hold no data; everything they show comes from the read API under its own auth. The content
 * security policy admits scripts and connections to this origin only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { WEB_DIST_DIR } from './build.ts';

/** The page URLs the app answers (each can be opened directly). */
export const PAGE_ROUTES = ['/', '/tasks', '/tasks/:task_id', '/tools', '/tools/:tool_id', '/waste', '/violations', '/hints', '/quarantine', '/manifests', '/search'] as const;

const CSP = ["default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"].join('; ');

/** Registers the pages and assets; throws when the bundle has not been built. */
export function registerWebApp(app: FastifyInstance, opts: { dir?: string } = {}): void {
  const dir = opts.dir ?? WEB_DIST_DIR;
  let html: string;
  let js: Buffer;
  let css: Buffer;
  try {
    html = readFileSync(join(dir, 'index.html'), 'utf8');
    js = readFileSync(join(dir, 'app.js'));
    css = readFileSync(join(dir, 'app.css'));
  } catch (err) {
    throw new Error(`web app bundle missing in ${dir}: run \`npm run build:web\``, { cause: err });
  }
  for (const url of PAGE_ROUTES) {
    app.get(url, async (_req, reply) =>
      reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').send(html),
    );
  }
  // Asset URLs carry the bundle's content hash (?v=), so they may be cached for good.
  const asset = (body: Buffer, type: string) => async (_req: unknown, reply: FastifyReply) =>
    reply.header('content-type', type).header('cache-control', 'public, max-age=31536000, immutable').header('x-content-type-options', 'nosniff').send(body);
  app.get('/app/app.js', asset(js, 'text/javascript; charset=utf-8'));
  app.get('/app/app.css', asset(css, 'text/css; charset=utf-8'));
}
