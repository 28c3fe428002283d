# How this project builds Go programs; sourced by every script here that runs `go build` or `go install`.
# - GOTOOLCHAIN=local: the Go installed on the machine, never a toolchain download.
# - GOMAXPROCS=$(nproc): every core, whatever the caller's (the test run's is 1, vitest.config.ts; `go build -p`
#   follows it, and so does a Docker engine ensure.sh starts).
# - GOFLAGS: modules resolved from the proxy (-mod=mod); no machine paths in binaries (-trimpath); no DWARF from the
#   compiler (-gcflags=all=-dwarf=false), since every binary is linked with -s -w, which drops it: kind built from an
#   empty build cache took 45.2 → 40.0 CPU-s (twice each, alternating), the same binary.
export GOTOOLCHAIN=local GOMAXPROCS=$(nproc)
export GOFLAGS="-mod=mod -trimpath -gcflags=all=-dwarf=false"
