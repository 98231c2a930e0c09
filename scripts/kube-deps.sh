#!/usr/bin/env bash
# Installs and builds what the project's Kubernetes needs, cached between
# runs; run by `make kube-up` and by scripts/test-deps.sh, safe to run again.
#
# - From Debian: etcd, containerd and runc (a second containerd of the
#   node's own: Docker's is left alone), the CNI plugins (bridge,
#   host-local, loopback), tcpdump (the egress test watches the real
#   interface with it).
# - From the Go module proxy, pinned: kube-apiserver, kube-controller-manager,
#   kube-scheduler, kubelet, kube-proxy and kubectl ${KUBE_VERSION} (the
#   e2e/kubeplane module), CoreDNS ${COREDNS_VERSION}, metrics-server
#   ${METRICS_SERVER_VERSION} (the autoscaler's resource metrics),
#   kube-router ${KUBE_ROUTER_VERSION} (its firewall alone: the
#   NetworkPolicies, enforced with iptables and ipset) and Prometheus (with
#   Kubernetes discovery, which Debian's lacks), into SHOWCASE_KUBE_BIN
#   (default ~/.cache/defect-showcase/kube-${KUBE_VERSION}).
# - From Debian, for kube-router: ipset; for kube-node.sh: gettext-base
#   (envsubst fills in deploy/kube-node's files), procps (pgrep).
#
# Where it cannot install (not root, no apt), it says so; kube-up refuses to
# start and the tests that need a piece skip locally and fail in CI.
set -uo pipefail

KUBE_VERSION=v1.34.2 # e2e/kubeplane's go.mod pins the same
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
# Prometheus 3.16.0 (its Go module numbers v3.16 as v0.316): Debian's 2.42
# is built without Kubernetes discovery. Built with Kubernetes discovery
# alone (Prometheus's own build tags; the node's configuration uses no
# other): the others' cloud SDKs (Azure's network client, Google's compute)
# are its slowest packages to compile.
PROMETHEUS_MODULE_VERSION=v0.316.0
PROMETHEUS_GOFLAGS="-mod=mod -tags=remove_all_sd,enable_kubernetes_sd"
METRICS_SERVER_VERSION=v0.8.0
# The newest kube-router the module proxy serves (v2.4 and later: refused);
# docs/deploy.md says which flaws are reported for it and why none reaches
# the node.
KUBE_ROUTER_VERSION=v2.1.0
PROMETHEUS_VERSION=3.16.0
kube_bin=${SHOWCASE_KUBE_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/defect-showcase/kube-$KUBE_VERSION}

# prefetch: download, in parallel, every module the builds below need
# (go build -n loads the packages, so it fetches what they import, and
# compiles nothing); scripts/test-deps.sh runs it in the background from
# its start, so that the network's work overlaps apt's and the compiler's.
# Go's module cache locks each module: a build that needs one while it is
# still coming waits for it.
if [ "${1:-}" = prefetch ]; then
	[ -x "$kube_bin/kubelet" ] && [ -x "$kube_bin/kubectl" ] && [ -x "$kube_bin/kube-apiserver" ] ||
		(cd "$(dirname "$0")/../e2e/kubeplane" && GOFLAGS=-mod=readonly GOWORK=off go build -n k8s.io/kubernetes/cmd/kube-apiserver \
			k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
			k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl >/dev/null 2>&1) &
	for p in "coredns github.com/coredns/coredns@${COREDNS_VERSION}" \
		"prometheus github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS_MODULE_VERSION} ${PROMETHEUS_GOFLAGS}" \
		"metrics-server sigs.k8s.io/metrics-server/cmd/metrics-server@${METRICS_SERVER_VERSION} -mod=mod" \
		"kube-router github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@${KUBE_ROUTER_VERSION} -mod=mod"; do
		read -r name pkg goflags <<<"$p"
		[ -x "$kube_bin/$name" ] || (cd / && GOFLAGS="$goflags" GOWORK=off go install -n "$pkg" >/dev/null 2>&1) &
	done
	wait
	exit 0
fi

need_apt=()
command -v etcd >/dev/null 2>&1 || need_apt+=(etcd-server)
command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 || need_apt+=(containerd)
command -v runc >/dev/null 2>&1 || need_apt+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] || need_apt+=(containernetworking-plugins)
command -v tcpdump >/dev/null 2>&1 || need_apt+=(tcpdump)
command -v nsenter >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
command -v ipset >/dev/null 2>&1 || need_apt+=(ipset)
command -v envsubst >/dev/null 2>&1 || need_apt+=(gettext-base)
command -v pgrep >/dev/null 2>&1 || need_apt+=(procps)
"$(dirname "$0")/apt-install.sh" kube-deps "${need_apt[@]}"

# The Kubernetes programs, stamped with their version (a plain go build
# would call itself v0.0.0-master).
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34"
missing=()
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
	[ -x "$kube_bin/$cmd" ] || missing+=("$cmd")
done
# One go build for them all: the six links run side by side.
if ((${#missing[@]})); then
	echo "kube-deps: building ${missing[*]} ${KUBE_VERSION} from the Go module proxy (minutes the first time)"
	mkdir -p "$kube_bin"
	tmp=$(mktemp -d)
	if (cd "$(dirname "$0")/../e2e/kubeplane" && GOFLAGS=-mod=readonly GOWORK=off CGO_ENABLED=0 \
		go build -trimpath -ldflags "$kube_ldflags" -o "$tmp/" "${missing[@]/#/k8s.io/kubernetes/cmd/}"); then
		for cmd in "${missing[@]}"; do mv "$tmp/$cmd" "$kube_bin/$cmd"; done
	else
		echo "kube-deps: could not build ${missing[*]}"
	fi
	rm -rf "$tmp"
fi
# The tests and users reach kubectl by name; a machine without one gets ours.
if ! command -v kubectl >/dev/null 2>&1 && [ -x "$kube_bin/kubectl" ]; then
	gobin=$(go env GOPATH)/bin
	mkdir -p "$gobin" && ln -sf "$kube_bin/kubectl" "$gobin/kubectl"
fi
# from_proxy NAME PACKAGE@VERSION LDFLAGS GOFLAGS: go install one program
# from the Go module proxy into kube_bin, saying so.
from_proxy() {
	local name=$1 pkg=$2 ldflags=$3 goflags=$4 tmp
	echo "kube-deps: building $name ($pkg) from the Go module proxy (minutes the first time)"
	mkdir -p "$kube_bin"
	tmp=$(mktemp -d)
	if GOFLAGS="$goflags" GOWORK=off CGO_ENABLED=0 GOBIN="$tmp" go install -trimpath -ldflags "-s -w $ldflags" "$pkg"; then
		mv "$tmp/$name" "$kube_bin/$name"
	else
		echo "kube-deps: could not build $name"
	fi
	rm -rf "$tmp"
}
"$kube_bin/coredns" -version 2>/dev/null | grep -q "CoreDNS-${COREDNS_VERSION#v}" ||
	from_proxy coredns "github.com/coredns/coredns@${COREDNS_VERSION}" "" ""
"$kube_bin/prometheus" --version 2>/dev/null | grep -q "version ${PROMETHEUS_VERSION}" ||
	from_proxy prometheus "github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS_MODULE_VERSION}" \
		"-X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION}" "${PROMETHEUS_GOFLAGS}"
"$kube_bin/metrics-server" --version 2>/dev/null | grep -qx "${METRICS_SERVER_VERSION}" ||
	from_proxy metrics-server "sigs.k8s.io/metrics-server/cmd/metrics-server@${METRICS_SERVER_VERSION}" \
		"-X k8s.io/client-go/pkg/version.gitVersion=${METRICS_SERVER_VERSION}" -mod=mod
# kube-router prints no version of its own (-version is empty without
# ldflags): a stamp file beside it names the version built.
[ -x "$kube_bin/kube-router" ] && [ "$(cat "$kube_bin/kube-router.version" 2>/dev/null)" = "$KUBE_ROUTER_VERSION" ] || {
	from_proxy kube-router "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@${KUBE_ROUTER_VERSION}" "" -mod=mod &&
		[ -x "$kube_bin/kube-router" ] && echo "$KUBE_ROUTER_VERSION" >"$kube_bin/kube-router.version"
}
exit 0
