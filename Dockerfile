# shop-sync worker image. Node 26 is the current LTS line; better-sqlite3 12.11 supports 20 to 26.
FROM node:26-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source where no prebuilt binary matches.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:26-bookworm-slim
ENV NODE_ENV=production DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY config ./config
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# The worker exits 0 on SIGTERM after the current page's checkpoint is committed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/shop-sync.js"]
CMD ["worker"]
