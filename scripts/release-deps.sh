#!/usr/bin/env bash
# Builds, pinned, from the Go module proxy, the programs a release needs
# and its rehearsal in `make test` drives (RELEASING.md): goreleaser v2,
# cosign, Helm, the CNCF distribution registry and actionlint, into
# $(go env GOPATH)/bin (`release-deps.sh NAME...`: only those). Safe to run again: a program that prints its
# pinned version is kept. `release-deps.sh prefetch [NAME...]` only
# downloads their modules. make test needs actionlint and Helm (about 3
# minutes fresh); make test-release all five (about 15: goreleaser 314 s,
# cosign 281 s, Helm 147 s, the registry 153 s, actionlint 21 s on
# 2026-11-27, fresh caches, this 2-core machine).
set -uo pipefail

GORELEASER_VERSION=${GORELEASER_VERSION:-v2.15.1}
ACTIONLINT_VERSION=${ACTIONLINT_VERSION:-v1.7.12}
COSIGN_VERSION=${COSIGN_VERSION:-v2.6.5}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
# The Kubernetes minor version Helm assumes without a cluster (helm
# template, lint): its own k8s.io modules' (client-go v0.37.0), as Helm's Makefile sets it.
HELM_K8S_MINOR=37
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.1.2}
gobin=$(go env GOPATH)/bin

# name, package@version, what `name VERSIONCMD` prints when it is the pinned one, version command, -ldflags
programs=(
	"actionlint|github.com/rhysd/actionlint/cmd/actionlint@${ACTIONLINT_VERSION}|${ACTIONLINT_VERSION#v}|-version|"
	"goreleaser|github.com/goreleaser/goreleaser/v2@${GORELEASER_VERSION}|${GORELEASER_VERSION#v}|--version|-X main.version=${GORELEASER_VERSION#v}"
	"cosign|github.com/sigstore/cosign/v2/cmd/cosign@${COSIGN_VERSION}|${COSIGN_VERSION}|version|-X sigs.k8s.io/release-utils/version.gitVersion=${COSIGN_VERSION}"
	"helm|helm.sh/helm/v3/cmd/helm@${HELM_VERSION}|${HELM_VERSION}|version --short|-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION} -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${HELM_K8S_MINOR} -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${HELM_K8S_MINOR}"
	"registry|github.com/distribution/distribution/v3/cmd/registry@${REGISTRY_VERSION}|${REGISTRY_VERSION}|--version|-X github.com/distribution/distribution/v3/version.version=${REGISTRY_VERSION}"
)

if [ "${1:-}" = prefetch ]; then
	shift
	for p in "${programs[@]}"; do
		IFS='|' read -r name pkg _ _ _ <<<"$p"
		if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
			continue
		fi
		(cd / && GOFLAGS='' GOWORK=off go install -n "$pkg" >/dev/null 2>&1) &
	done
	wait
	exit 0
fi

status=0
for p in "${programs[@]}"; do
	IFS='|' read -r name pkg want vcmd ldflags <<<"$p"
	# release-deps.sh NAME...: only those.
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	# shellcheck disable=SC2086
	if "$gobin/$name" $vcmd 2>&1 | grep -qF -- "$want"; then
		continue
	fi
	echo "release-deps: building $name ${pkg##*@}"
	start=$SECONDS
	if (cd / && GOFLAGS='' GOWORK=off CGO_ENABLED=0 GOBIN="$gobin" go install -trimpath -ldflags "-s -w $ldflags" "$pkg"); then
		echo "release-deps: $name built in $((SECONDS - start)) s"
	else
		echo "release-deps: could not build $name; the release tests will skip (and fail in CI)"
		status=1
	fi
done
exit $status
