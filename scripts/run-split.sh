#!/usr/bin/env bash
# Runs the four services and the gateway as five processes on one machine:
# the gateway on PORT (default 8080, every interface) in front of the
# services on 127.0.0.1, ports PORT+1 to PORT+4 (security, errors,
# conformance, performance); their admin listeners on 127.0.0.1, ports
# ADMIN_PORT (default PORT+1010, so 9090 for 8080) to ADMIN_PORT+4.
# It refuses to start when one of the ten ports is taken. Ctrl-C stops all
# five.
set -euo pipefail
bin=${1:-bin}
port=${PORT:-8080}
admin=${ADMIN_PORT:-$((port + 1010))}
for p in "$port" "$admin"; do
	if ! [[ $p =~ ^[0-9]+$ ]] || ((p < 1 || p + 4 > 65535)); then
		echo "run-split: $p is not a base port (1 to 65531: five ports from it are used)" >&2
		exit 2
	fi
done
if ((admin <= port + 4 && port <= admin + 4)); then
	echo "run-split: the API ports $port-$((port + 4)) and the admin ports $admin-$((admin + 4)) overlap" >&2
	exit 2
fi
for p in $(seq "$port" $((port + 4))) $(seq "$admin" $((admin + 4))); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		echo "run-split: port $p is taken (something listens on it); choose other ports, e.g. make run-split PORT=$((port + 100))" >&2
		exit 2
	fi
done
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT INT TERM
i=0
for svc in security errors conformance performance; do
	i=$((i + 1))
	ADDR=127.0.0.1:$((port + i)) ADMIN_ADDR=127.0.0.1:$((admin + i)) "$bin/$svc-svc" & pids+=($!)
done
ADDR=:$port ADMIN_ADDR=127.0.0.1:$admin \
UPSTREAM_SECURITY=http://127.0.0.1:$((port + 1)) \
UPSTREAM_ERRORS=http://127.0.0.1:$((port + 2)) \
UPSTREAM_CONFORMANCE=http://127.0.0.1:$((port + 3)) \
UPSTREAM_PERFORMANCE=http://127.0.0.1:$((port + 4)) \
	"$bin/gateway" & pids+=($!)
echo "run-split: API http://localhost:$port, admin http://127.0.0.1:$admin; services on 127.0.0.1:$((port + 1))-$((port + 4))" >&2
wait -n
