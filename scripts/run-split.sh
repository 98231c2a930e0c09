#!/usr/bin/env bash
# Runs the four services and the gateway as five processes on one machine:
# services on 127.0.0.1:8081-8084, the gateway on :8080 in front of them.
# Ctrl-C stops all five.
set -euo pipefail
bin=${1:-bin}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM
ADDR=127.0.0.1:8081 "$bin/security-svc" & pids+=($!)
ADDR=127.0.0.1:8082 "$bin/errors-svc" & pids+=($!)
ADDR=127.0.0.1:8083 "$bin/conformance-svc" & pids+=($!)
ADDR=127.0.0.1:8084 "$bin/performance-svc" & pids+=($!)
UPSTREAM_SECURITY=http://127.0.0.1:8081 \
UPSTREAM_ERRORS=http://127.0.0.1:8082 \
UPSTREAM_CONFORMANCE=http://127.0.0.1:8083 \
UPSTREAM_PERFORMANCE=http://127.0.0.1:8084 \
	"$bin/gateway" & pids+=($!)
wait -n
