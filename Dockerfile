# Keeper: multi-stage build. The runtime image holds production dependencies and the built
# JavaScript (plain node: no TypeScript loader in memory, about 30 MB less than running the sources
# through tsx), runs as a non-root user, and reports health on /healthz. Config and keys are
# mounted, never baked in:
#   docker run -v $PWD/keeper.yaml:/config/keeper.yaml:ro -v $PWD/keys:/keys:ro \
#     -e KEEPER_API_KEY_FILE=/run/secrets/api-key -e KEEPER_REDIS_URL=redis://redis:6379 \
#     -e KEEPER_REDIS_PASSWORD_FILE=/run/secrets/redis-password \
#     -e KEEPER_OPS_HOST=0.0.0.0 keeper start --config /config/keeper.yaml

# Pinned by digest (the multi-platform index of node:24.21.0-bookworm-slim built 2026-09-19), so a
# rebuild of the tag cannot change what is built on; bump tag and digest together.
FROM node:24.21.0-bookworm-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6 AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The stand-in for bigint-buffer (package.json "overrides") installs from here.
COPY vendor ./vendor
# As .ci/run installs: the registry lacks other platforms' optional binaries (litesvm's), which npm ci
# counts as a lockfile mismatch; npm install then installs the same locked, exactly pinned versions.
# No package's install script runs: none is needed (native parts come prebuilt as optional packages).
RUN npm ci --no-audit --no-fund --ignore-scripts || npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json biome.json ./
COPY bin ./bin
COPY src ./src
COPY strategies ./strategies
COPY bench ./bench
COPY config ./config
RUN npm run build
RUN npm prune --omit=dev

FROM node:24.21.0-bookworm-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6 AS runtime
ENV NODE_ENV=production
WORKDIR /app
RUN groupadd --system keeper && useradd --system --gid keeper --home-dir /app --shell /usr/sbin/nologin keeper
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/vendor ./vendor
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/dist/src ./dist/src
COPY --from=build --chown=root:root /app/dist/strategies ./dist/strategies
COPY --from=build --chown=root:root /app/config ./config
USER keeper
VOLUME ["/config", "/keys"]
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.KEEPER_OPS_PORT || 9464) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# User strategies written in TypeScript still load: tsx (a production dependency) is registered the
# first time a .ts module is named in the config.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "--no-flush-bytecode", "dist/src/cli.js"]
CMD ["start", "--config", "/config/keeper.yaml"]
