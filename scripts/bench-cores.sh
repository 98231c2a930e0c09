#!/usr/bin/env bash
# The floor table at 1, 2, 4 and 8 server cores, as many of them as this
# machine has room for: each server (the net/http floor, the one-process
# gateway, our gateway and Caddy as proxies) held to N cores by a cgroup's
# CPU quota and pinned to cores 0..N-1, wrk and the proxies' upstream on
# the others, so a server needs twice its cores on the machine. One row per
# N, from showcase-bench -quota-only -pin (docs/performance.md). Needs root
# (the cgroups), wrk and Caddy (installed from Debian if missing).
#
#   scripts/bench-cores.sh [OUT]     # default out/bench-cores
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/bench-cores}
cores=$(nproc)
command -v wrk >/dev/null && command -v caddy >/dev/null || ./scripts/apt-install.sh bench-cores wrk caddy
go build -o "$out/showcase-bench" ./tools/cmd/showcase-bench
rows=""
for n in 1 2 4 8; do
	if (( 2 * n > cores )); then
		echo "bench-cores: $n server cores need $((2 * n)) here, this machine has $cores: left out" >&2
		continue
	fi
	"$out/showcase-bench" -quota-only -quota "$n" -pin -out "$out/$n"
	rows+=$(cat "$out/$n/floor-row.md")$'\n'
done
echo
echo "$cores cores, $(date -u '+%Y-%m-%d %H:%M UTC'):"
echo
echo "| server cores | net/http floor req/s | gateway req/s | gateway / floor | gateway as proxy / Caddy |"
echo "|---|---|---|---|---|"
printf '%s' "$rows"
