# syntax=docker/dockerfile:1
# roomgate: build with the dev toolchain, run with production dependencies only, as a non-root user.
#   docker build -t roomgate .
#   docker run --rm -v "$PWD/roomgate.yaml:/etc/roomgate/roomgate.yaml:ro" -e TELEGRAM_FEED_TOKEN=… roomgate
# The compose file next to this one runs it with Redis, a remote namespace and a second worker.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    ROOMGATE_STATE_DIR=/var/lib/roomgate
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /var/lib/roomgate /etc/roomgate && chown node:node /var/lib/roomgate
USER node
EXPOSE 9464
# /healthz answers 200 while Redis answers and the workers run (also when one bot is degraded);
# `roomgate health` asks it on the port the configuration's http section names.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "dist/cli/main.js", "health", "-c", "/etc/roomgate/roomgate.yaml"]
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["start", "-c", "/etc/roomgate/roomgate.yaml"]
