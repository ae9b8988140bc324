# syntax=docker/dockerfile:1
# Production image for Fly.io (linux/amd64: the mediasoup alias ships a prebuilt linux-x64 worker).
# Nothing native is compiled in any stage: argon2 and the mediasoup worker come prebuilt in their
# packages. Built and run for real by `npm run test:image` (test/image/run.ts, docs/deploy-fly.md).

ARG NODE_VERSION=22

# --- build: type-checks and compiles what the image ships (src/ -> dist/, tsconfig.build.json) ---
# Only src/ is checked here, not the tests, benchmarks and examples that `npm run typecheck` covers:
# they never reach the image, and checking them would pull test-only files (examples/, test/) into
# the build context of every deploy. CI runs the full `npm run typecheck` on every change.
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The service only: --ignore-scripts skips postbuild (the relay client package, not shipped here).
RUN npm run build --ignore-scripts

# --- runtime: slim Node, production dependencies only, compiled JavaScript, tini as PID 1, non-root ---
FROM node:${NODE_VERSION}-slim AS runtime
# ffmpeg: the relay's recordings run Debian's (one process per recording, stream copy; docs/media-relay.md).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ffmpeg \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
WORKDIR /app
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    RECORDINGS_DIR=/var/lib/chat-backend/recordings
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force && rm -rf /root/.npm
COPY drizzle ./drizzle
COPY --from=build /app/dist ./dist
# RECORDINGS_DIR, outside /app (which holds only what runs) and writable by the service; mount a
# volume there to keep recordings across machines' restarts (docs/deploy-fly.md).
RUN mkdir -p /var/lib/chat-backend/recordings && chown -R node:node /var/lib/chat-backend
# uid 1000 of the node base image
USER node
EXPOSE 3000 3001 40000-40199/udp 40000-40199/tcp
# tini forwards SIGTERM/SIGINT to node and reaps children (the mediasoup workers).
ENTRYPOINT ["/usr/bin/tini", "--"]
# node directly, not through npm, so the signal reaches the service itself; compiled JavaScript
# rather than tsx (faster start, less memory: bench/RESULTS.md, "Container start-up").
CMD ["node", "dist/server.js"]
