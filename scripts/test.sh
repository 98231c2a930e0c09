#!/usr/bin/env bash
# make test: the whole suite, as .ci/run runs it.
#
# On a 2-core machine the suite is two halves that leave each other room:
#   1. test-deps (the end-to-end tests' programs, built from the Go module
#      proxy one after another) beside lint and test-modules: a build's last
#      packages and its link run on one core, and apt and the downloads on
#      none;
#   2. the e2e module, which waits on processes, containers and a node about
#      half its time, beside every other module's tests.
# Each background half's lines are prefixed with its name. Every step runs
# to its end and the script fails if any did, saying which.
#
# -vet=off: make lint has already run go vet over every module (a superset
# of the checks go test runs).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
MAKE=${MAKE:-make}

failed=()
# stop_if_failed: exit 1, naming every step that failed, if any did.
stop_if_failed() {
	if [ ${#failed[@]} -gt 0 ]; then
		echo "make test: failed: ${failed[*]}" >&2
		exit 1
	fi
}
# prefixed NAME CMD...: run CMD with its output's lines prefixed "NAME| ".
prefixed() {
	local name=$1
	shift
	"$@" 2>&1 | sed -u "s/^/$name| /"
	return "${PIPESTATUS[0]}"
}

prefixed test-deps "$MAKE" --no-print-directory test-deps &
deps=$!
for step in lint test-modules; do
	"$MAKE" --no-print-directory "$step" || failed+=("$step")
done
wait "$deps" || failed+=(test-deps)
stop_if_failed

gotest() { (cd "$1" && $GO test -race -vet=off -count=1 -timeout 45m ./...); }
prefixed e2e gotest e2e &
e2e=$!
for d in $($GO list -m -f '{{.Dir}}'); do
	[ "$d" = "$PWD/e2e" ] && continue
	name=${d#"$PWD"} && name=${name#/} && name=${name:-.}
	echo "== $name"
	gotest "$d" || failed+=("$name")
done
wait "$e2e" || failed+=(e2e)
stop_if_failed
echo "make test: every module passed"
