# The engine's container image: Node 24 LTS, production dependencies only, non-root, read-only root
# filesystem friendly (state goes to /var/lib/openmcp-engine, a volume). Build: docker build -t openmcp-engine .
# The build stage runs hack/image/assemble.sh, the same script the tests run to check the assembled tree.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY hack/image/assemble.sh hack/image/assemble.sh
COPY src src
COPY crds crds
COPY examples examples
RUN hack/image/assemble.sh /app

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=root:root /app /app
# The node user (uid 1000) owns nothing in /app: the code cannot be changed at run time.
USER 1000:1000
VOLUME ["/var/lib/openmcp-engine"]
ENTRYPOINT ["node", "/app/src/cli/main.ts"]
CMD ["run", "--help"]
