# Berth in a container: the host, its dashboard and the bundled demo agent, as a user who is not root.
# Build from a checkout:   docker build -t berth .
# Run:                     docker run -d --name berth -p 127.0.0.1:7420:7420 -v berth-data:/data \
#                            -v "$PWD":/work --stop-timeout 40 berth
# docs/container.md says what an agent inside it can and cannot see.

ARG NODE_IMAGE=node:20-bookworm-slim

# 1. The package, built from this checkout exactly as `npm pack` makes it for the registry.
FROM ${NODE_IMAGE} AS package
WORKDIR /src
COPY package.json package-lock.json ./
# The build needs the dev tools (TypeScript, Vite, esbuild); no dependency's install script is needed to build.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build && npm pack --ignore-scripts --pack-destination /package

# 2. Installed as a user installs it: runtime dependencies only. A compiler is here in case SQLite's prebuilt binary
#    cannot be downloaded and better-sqlite3 builds from source; none of it reaches the final image.
FROM ${NODE_IMAGE} AS install
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY --from=package /package/ /package/
RUN npm install --global --prefix /opt/berth --allow-scripts=better-sqlite3 --no-audit --no-fund /package/*.tgz

# 3. What runs: Node, tini to reap what agents leave behind (Berth is not PID 1), git for agents that use it.
FROM ${NODE_IMAGE}
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini git ca-certificates \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /data /work \
  && chown node:node /data /work
COPY --from=install /opt/berth/ /opt/berth/
ENV PATH=/opt/berth/bin:$PATH
# The image's own user, uid 1000: the owner of most desktop users' files, so a bind-mounted project stays writable.
USER node
WORKDIR /work
# The SQLite journal, the token and the remembered devices: keep them on a volume to keep sessions across containers.
VOLUME ["/data"]
EXPOSE 7420
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:7420/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Berth stops its agents in order on SIGTERM; give it longer than its own orderly stop (docker run --stop-timeout 40).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "berth"]
CMD ["serve", "--host", "0.0.0.0", "--port", "7420", "--data-dir", "/data"]
