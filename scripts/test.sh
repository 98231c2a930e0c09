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
# Each background step's lines are prefixed with its name, and every step
# says how long it took. Every step runs to its end and the script fails if
# any did, saying which.
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

# timed NAME CMD...: run CMD, then say how long it took and whether it failed.
timed() {
	local name=$1 start=$SECONDS rc=0
	shift
	"$@" || rc=$?
	echo "make test: $name took $((SECONDS - start)) s$( ((rc == 0)) || echo ", failed")"
	return "$rc"
}

start=$SECONDS
prefixed test-deps timed test-deps "$MAKE" --no-print-directory test-deps &
deps=$!
for step in lint test-modules; do
	timed "$step" "$MAKE" --no-print-directory "$step" || failed+=("$step")
done
wait "$deps" || failed+=(test-deps)
echo "make test: the first half took $((SECONDS - start)) s"
stop_if_failed

start=$SECONDS
gotest() { (cd "$1" && $GO test -race -vet=off -count=1 -timeout 45m ./...); }
prefixed e2e timed e2e gotest e2e &
e2e=$!
for d in $($GO list -m -f '{{.Dir}}'); do
	[ "$d" = "$PWD/e2e" ] && continue
	name=${d#"$PWD"} && name=${name#/} && name=${name:-.}
	echo "== $name"
	timed "$name" gotest "$d" || failed+=("$name")
done
wait "$e2e" || failed+=(e2e)
echo "make test: the second half took $((SECONDS - start)) s"
stop_if_failed
echo "make test: every module passed"
