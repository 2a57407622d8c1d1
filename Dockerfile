# Keeper: multi-stage build. The runtime image holds production dependencies and the sources
# (run through tsx, the same way as in a checkout), runs as a non-root user, and reports health
# on /healthz. Config and keys are mounted, never baked in:
#   docker run -v $PWD/keeper.yaml:/config/keeper.yaml:ro -v $PWD/keys:/keys:ro \
#     -e KEEPER_API_KEY_FILE=/run/secrets/api-key -e KEEPER_REDIS_URL=redis://redis:6379 \
#     -e KEEPER_OPS_HOST=0.0.0.0 keeper start --config /config/keeper.yaml

FROM node:20.19-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json biome.json ./
COPY bin ./bin
COPY src ./src
COPY strategies ./strategies
COPY config ./config
# The build step is the type check: the runtime runs the sources through tsx.
RUN npx tsc --noEmit
RUN npm prune --omit=dev

FROM node:20.19-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
RUN groupadd --system keeper && useradd --system --gid keeper --home-dir /app --shell /usr/sbin/nologin keeper
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/bin ./bin
COPY --from=build --chown=root:root /app/src ./src
COPY --from=build --chown=root:root /app/strategies ./strategies
COPY --from=build --chown=root:root /app/config ./config
USER keeper
VOLUME ["/config", "/keys"]
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.KEEPER_OPS_PORT || 9464) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
ENTRYPOINT ["node", "bin/keeper.js"]
CMD ["start", "--config", "/config/keeper.yaml"]
