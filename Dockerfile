# tool-audit: one image for every role (serve, ingest, analyze, migrate, demo, dashboards); the
# command picks it. docker-compose.yml runs each role with its own ClickHouse user.
# The current LTS line (Node 26 since October 2026); npm test runs the files where the Node version matters on it too (README, "Two commands").
FROM node:26-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# The emitter is an npm workspace of the root package: npm install needs its package.json.
COPY emit/package.json ./emit/
# patches/: applied by patch-package at install (postinstall): kafkajs's negative timeout on Node >= 24.
COPY patches ./patches
# Dev dependencies are kept out; tsx (a runtime dependency) runs the TypeScript sources: compiled
# JavaScript would start `serve` ~0.3 s sooner, not worth a build stage (docs/operations.md, "tsx or compiled JavaScript").
# `npm install`, not `npm ci`: chdb's optional packages for other platforms are not in the registry.
RUN npm install --omit=dev --no-audit --no-fund --no-save && npm cache clean --force
COPY bin ./bin
COPY schemas ./schemas
COPY emit ./emit
COPY ingest ./ingest
COPY analyzers ./analyzers
COPY queries ./queries
COPY api ./api
COPY web ./web
COPY dashboards ./dashboards
COPY platform ./platform
COPY cli ./cli
COPY tsconfig.json ./
# The pages at / (web/): bundled here, so `serve` finds web/dist up to date and never writes at start.
RUN node_modules/.bin/tsx web/build.ts
# The audit log's key and ledger (AUDIT_LOG_DIR in compose): a named volume mounted here takes
# this folder's owner, so the node user can write it.
RUN mkdir -p /var/lib/tool-audit/audit-log && chown -R node:node /var/lib/tool-audit && chmod 700 /var/lib/tool-audit/audit-log
USER node
# 8080: HTTP API of `serve` (and /healthz, /readyz, /metrics of `ingest` and `analyze`), set by PORT.
EXPOSE 8080
ENTRYPOINT ["node", "bin/tool-audit.mjs"]
CMD ["serve"]
