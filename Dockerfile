# The engine's container image: Node 24 LTS, production dependencies only, non-root, read-only root
# filesystem friendly (state goes to /var/lib/openmcp-engine, a volume). Build: docker build -t openmcp-engine .
# The build stage runs hack/image/assemble.sh (compiles to JavaScript, installs production dependencies),
# the same script the tests run to check the assembled tree.

FROM node:24-bookworm-slim AS build
# Names this stage's image, which the legacy builder leaves untagged, for hack/containers/ensure.sh to prune.
LABEL org.openmcp.engine-stage=build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# extra-ca.pem is optional and never in the repository: hack/containers/ensure.sh adds the host's CA bundle to
# its build context where the machine re-signs TLS, so npm can reach the registry (build stage only).
COPY hack/image/assemble.sh hack/image/extra-ca.pe[m] hack/image/
COPY src src
COPY crds crds
COPY examples examples
COPY templates templates
RUN if [ -f hack/image/extra-ca.pem ]; then export NODE_EXTRA_CA_CERTS=/src/hack/image/extra-ca.pem; fi; \
    hack/image/assemble.sh /app

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# V8 sized to the measured working set (bench/run-scale.bench.ts): a small young generation keeps RSS
# near the live heap at no cost in throughput; the old-space limit leaves room for 10,000 Clusters.
# The third of the engine's flags, --optimize-for-size, is one NODE_OPTIONS may not carry: `run` adds it
# itself, replacing its process at start (src/runtime/start/v8-flags.ts).
ENV NODE_OPTIONS="--max-semi-space-size=2 --max-old-space-size=256"
WORKDIR /app
COPY --from=build --chown=root:root /app /app
# The default state folder, owned by uid 1000, so the image works with no volume mounted there too (the
# openMCP operator's init Job and Deployment mount none); deploy/base mounts an emptyDir.
RUN mkdir -p /var/lib/openmcp-engine && chown 1000:1000 /var/lib/openmcp-engine
ENV OPENMCP_ENGINE_STATE_DIR=/var/lib/openmcp-engine
# What the kind backend needs in a Pod that has the host's Docker socket mounted: the kind and docker clients.
# They are not in the repository; hack/containers/ensure.sh puts the ones it built or installed for the host into
# the build context (hack/image/tools/), and an image built without them has none (the kind backend says so).
# The engine runs as uid 1000, which owns nothing in /app: the code cannot be changed at run time. The image
# starts as root only so that, deployed with no securityContext (openMCP's ClusterProvider has no field for one),
# the entrypoint can keep a mounted Docker socket's group while it drops root (hack/image/openmcp-engine-entrypoint);
# with runAsUser: 1000 (deploy/base) it starts as uid 1000 directly.
COPY hack/image/openmcp-engine-entrypoint hack/image/tool[s] /usr/local/bin/
USER 0:0
VOLUME ["/var/lib/openmcp-engine"]
ENTRYPOINT ["/usr/local/bin/openmcp-engine-entrypoint"]
CMD ["run", "--help"]
