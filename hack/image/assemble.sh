#!/usr/bin/env bash
# Assembles the runtime tree of the engine into DIR: the compiled JavaScript (dist/), CRDs, examples, the new-backend templates and
# production dependencies only. The container build (Dockerfile) runs exactly this, and so does the test
# that checks the assembled tree starts (test/integration/deploy.heavy.test.ts).
# Compiled rather than TypeScript stripped at start-up: Node then never loads its type stripper, which
# measured ~30 MB less RSS and a faster start (bench/run-scale.bench.ts runs the same dist/).
# Usage: hack/image/assemble.sh DIR
set -euo pipefail
out=${1:?usage: assemble.sh DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
# The compiler comes from the repository's dev dependencies; install them if this checkout has none.
if [[ ! -x "$root/node_modules/.bin/tsc" ]]; then
  (cd "$root" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
node "$root/node_modules/typescript/bin/tsc" -p "$root/tsconfig.build.json" --outDir "$out/dist"
cp "$root/package.json" "$root/package-lock.json" "$out/"
cp -r "$root/crds" "$root/examples" "$root/templates" "$out/"
cd "$out"
# The locked versions, without dev dependencies (test tools, the node binary the repo uses for
# development) and without install scripts. (`npm install` rather than `npm ci`: `ci` also demands lock
# entries for optional platform packages of dev tools, which some registries do not serve.)
npm install --omit=dev --ignore-scripts --no-save --no-audit --no-fund --loglevel=error
