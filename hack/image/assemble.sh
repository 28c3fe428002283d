#!/usr/bin/env bash
# Assembles the runtime tree of the engine into DIR: sources, CRDs, examples and production
# dependencies only. The container build (Dockerfile) runs exactly this, and so does the test that
# checks the assembled tree starts (test/integration/image.test.ts).
# Usage: hack/image/assemble.sh DIR
set -euo pipefail
out=${1:?usage: assemble.sh DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
cp "$root/package.json" "$root/package-lock.json" "$out/"
cp -r "$root/src" "$root/crds" "$root/examples" "$out/"
cd "$out"
# The locked versions, without dev dependencies (test tools, the node binary the repo uses for
# development) and without install scripts. (`npm install` rather than `npm ci`: `ci` also demands lock
# entries for optional platform packages of dev tools, which some registries do not serve.)
npm install --omit=dev --ignore-scripts --no-save --no-audit --no-fund --loglevel=error
