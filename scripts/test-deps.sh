#!/usr/bin/env bash
# Installs what the end-to-end tests drive for real: Prometheus and Chromium
# (Debian's packages), nginx, HAProxy and Caddy (Debian's, whose own checkers
# read the benchmark's proxy configurations), Docker Compose v2 (built from the Go module proxy,
# pinned; Debian's docker-compose is v1, and the compose test runs both), the
# kustomize CLI, actionlint and Helm (scripts/release-deps.sh), and for Kubernetes a real single node (scripts/kube-deps.sh:
# etcd, containerd, runc and the CNI plugins from Debian; the Kubernetes
# programs and CoreDNS built from the Go module proxy, cached in
# SHOWCASE_KUBE_BIN). Run by
# `make test`; safe to run again. Where it cannot install (not root, no
# apt), it says so, and the tests that need the tool skip locally and fail
# in CI (CI=true).
set -uo pipefail

# The newest kustomize CLI that builds with the project's Go: v5.8.3 wants Go 1.27.
KUSTOMIZE_VERSION=${KUSTOMIZE_VERSION:-v5.8.2}
COMPOSE_VERSION=${COMPOSE_VERSION:-v2.29.7}
gobin=$(go env GOPATH)/bin

# Every Go module the builds below need, fetched in the background from
# the start (kube-deps.sh prefetch says how); waited for at the end.
"$(dirname "$0")/kube-deps.sh" prefetch &
prefetch=$!
"$(dirname "$0")/release-deps.sh" prefetch actionlint helm &
for pkg in "github.com/docker/compose/v2/cmd@${COMPOSE_VERSION}" "sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}"; do
	(cd / && GOFLAGS='' GOWORK=off go install -n "$pkg" >/dev/null 2>&1) &
done

need_apt=()
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# The benchmark's reference proxies: their configurations are checked by
# their own programs (tools/cmd/showcase-bench).
command -v nginx >/dev/null 2>&1 || need_apt+=(nginx-light)
command -v haproxy >/dev/null 2>&1 || need_apt+=(haproxy)
command -v caddy >/dev/null 2>&1 || need_apt+=(caddy)

"$(dirname "$0")/apt-install.sh" test-deps "${need_apt[@]}"

if command -v docker >/dev/null 2>&1 && ! docker compose version 2>/dev/null | grep -q "${COMPOSE_VERSION#v}"; then
	echo "test-deps: building docker compose ${COMPOSE_VERSION} (a few minutes the first time)"
	plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins
	tmp=$(mktemp -d)
	if GOFLAGS='' GOWORK=off GOBIN="$tmp" go install -ldflags "-X github.com/docker/compose/v2/internal.Version=${COMPOSE_VERSION}" "github.com/docker/compose/v2/cmd@${COMPOSE_VERSION}"; then
		mkdir -p "$plugins" && mv "$tmp/cmd" "$plugins/docker-compose"
	else
		echo "test-deps: could not build docker compose v2; the compose test runs with what there is"
	fi
	rm -rf "$tmp"
fi
if ! "$gobin/kustomize" version 2>/dev/null | grep -q "${KUSTOMIZE_VERSION}"; then
	echo "test-deps: building kustomize ${KUSTOMIZE_VERSION}"
	GOFLAGS='' GOWORK=off go install "sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}" ||
		echo "test-deps: could not build kustomize; the Kubernetes control-plane test will skip (and fail in CI)"
fi
# Of a release's tools, what make test drives: actionlint (the workflows)
# and Helm (the chart); make test-release builds the rest.
"$(dirname "$0")/release-deps.sh" actionlint helm || echo "test-deps: the workflow and chart tests will skip (and fail in CI)"
# The single-node cluster's pieces and the control plane (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl,
# CoreDNS, containerd, runc, the CNI plugins): scripts/kube-deps.sh.
"$(dirname "$0")/kube-deps.sh"
wait "$prefetch"
wait
exit 0
