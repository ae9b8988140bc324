# syntax=docker/dockerfile:1
# Production image for Fly.io (linux/amd64: the mediasoup alias ships a prebuilt linux-x64 worker).
# Nothing is compiled in any stage: argon2 and the mediasoup worker come prebuilt in their packages.

ARG NODE_VERSION=22

# --- check: type-checks the sources with the dev dependencies; the final image takes only a marker ---
FROM node:${NODE_VERSION}-slim AS check
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json drizzle.config.ts vitest.config.ts ./
COPY src ./src
COPY test ./test
COPY bench ./bench
RUN npm run typecheck && touch /app/.checked

# --- runtime: slim Node, production dependencies only, tini as PID 1, non-root user ---
FROM node:${NODE_VERSION}-slim AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0
COPY --from=check /app/.checked /tmp/.checked
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY drizzle ./drizzle
COPY src ./src
USER node
EXPOSE 3000 3001 40000-40199/udp 40000-40199/tcp
# tini forwards SIGTERM/SIGINT to node and reaps children (the mediasoup workers).
ENTRYPOINT ["/usr/bin/tini", "--"]
# node directly, not through npm, so the signal reaches the service itself.
CMD ["node", "--import", "tsx", "src/server.ts"]
