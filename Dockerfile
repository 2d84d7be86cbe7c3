# tool-audit: one image for every role (serve, ingest, analyze, migrate); the command picks it.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Dev dependencies are kept out; tsx (a runtime dependency) runs the TypeScript sources.
# `npm install`, not `npm ci`: chdb's optional packages for other platforms are not in the registry.
RUN npm install --omit=dev --no-audit --no-fund --no-save
COPY bin ./bin
COPY src ./src
COPY tsconfig.json ./
USER node
ENTRYPOINT ["node", "bin/tool-audit.mjs"]
CMD ["serve"]
