# Agentpost in a container: every role in one process by default (`serve`), or one role per container with
# `serve --roles …` (compose.roles.yaml). The database and the secret key file live in the /data volume.
# Build: docker build -t agentpost .   Run: docker compose up (compose.yaml). See docs/deployment.md.

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY storage storage
COPY server server
COPY tools tools
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    AGENTPOST_HOST=0.0.0.0 \
    AGENTPOST_DATABASE_URL=file:/data/agentpost.db \
    AGENTPOST_SECRET_KEY_FILE=/data/secret.key
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json README.md LICENSE ./
COPY cjs cjs
COPY docker/entrypoint.sh docker/healthcheck.mjs docker/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
# HTTP (API, /mcp, /dashboard) and inbound SMTP.
EXPOSE 3000 2525
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "/app/docker/healthcheck.mjs"]
# The entrypoint passes signals straight to the service (exec): `docker stop` shuts it down gracefully.
ENTRYPOINT ["/bin/sh", "/app/docker/entrypoint.sh"]
CMD ["serve"]
