# shop-sync worker image. Node 26 is the current LTS line; better-sqlite3 12.11 supports 20 to 26.
# Stages: `build` compiles dist/ with the dev dependencies; `production-deps` installs exactly what
# .ci/run proves (npm ci --omit=dev beside a built dist/); the runtime stage copies both and nothing else.
FROM node:26-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source where no prebuilt binary matches.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY bench ./bench
# prepare builds dist/ here (tsc, then the esbuild bundle): the dev dependencies are installed.
RUN npm ci --no-audit --no-fund

FROM node:26-bookworm-slim AS production-deps
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
# prepare finds dev dependencies omitted and dist/ built, and builds nothing.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:26-bookworm-slim
# tini is PID 1: it forwards SIGTERM to node and reaps zombies, so the worker shuts down gracefully.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
# OPS_HOST: the ops port listens on every interface of the container, which is its own network: probes
# and Prometheus reach it there. The worker's default outside a container is loopback only (README, Ops).
ENV NODE_ENV=production DATA_DIR=/data OPS_PORT=9464 OPS_HOST=0.0.0.0
# libuv's threads, through which every asynchronous file operation goes (a sync's feeds, their fsyncs):
# with its default of 4, the syncs of many small shops queue for them (docs/operations.md, Worker).
# Node reads it once, before any of our code runs, so it is set here rather than by shop-sync.
ENV UV_THREADPOOL_SIZE=16
WORKDIR /app
COPY --from=production-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY config ./config
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 9464
# node probes the ops port itself: the slim image has no curl. OPS_PORT=0 turns the port, and so this
# probe, off: run such a container with --no-healthcheck.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.OPS_PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The worker exits 0 on SIGTERM once its running syncs have stopped at a checkpoint.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/shop-sync.js"]
CMD ["worker"]
