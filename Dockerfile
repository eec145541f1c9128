# syntax=docker/dockerfile:1
# One multi-stage image definition for both services: `--target gateway` or `--target worker`.
# The build stage compiles TypeScript; the runtime has production dependencies only, runs as the
# unprivileged `node` user under tini, and writes nothing to its root filesystem (it can be read-only).

FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts are only needed by the local embedded PostgreSQL, which images never use.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY libs ./libs
COPY apps ./apps
RUN npx nest build gateway && npx nest build worker && npx vite build --config apps/console/vite.config.mts

FROM node:24-trixie-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM node:24-trixie-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
USER node
ENTRYPOINT ["/usr/bin/tini", "--"]

FROM runtime AS worker
# All interfaces of the container's own network (the app's default is loopback): the orchestrator's probes and
# Prometheus reach it from outside the container; what the host exposes is decided where ports are published.
ENV WORKER_METRICS_PORT=9464 WORKER_METRICS_HOST=0.0.0.0
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.WORKER_METRICS_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The heap as the launcher sizes it (tools/local-stack/apps.ts, appNodeFlags): a 160 MB old generation, which V8
# otherwise let fill with dead deliveries to ~2x that of a 40-70 MB live set. Override the command to raise it.
CMD ["node", "--enable-source-maps", "--max-old-space-size=160", "dist/apps/worker/apps/worker/src/main.js"]

FROM runtime AS gateway
ENV PORT=3000
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The heap as the launcher sizes it (tools/local-stack/apps.ts, appNodeFlags; docs/deployment-defaults.md): 2 MB
# semi-spaces (the default 16 MB each was ~28 MB of an idle gateway's RSS) and a 128 MB old generation, which V8
# otherwise grew to 200+ MB under sustained load with a live set under 100 MB. Override the command to raise it.
CMD ["node", "--enable-source-maps", "--max-semi-space-size=2", "--max-old-space-size=128", "dist/apps/gateway/apps/gateway/src/main.js"]
