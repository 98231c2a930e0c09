#!/usr/bin/env bash
# Signs each image showcase-image pushed (DIR/images.txt: REF@DIGEST per
# line) with cosign, attests its CycloneDX SBOM (DIR/PROGRAM.cdx.json) to
# it, and verifies both, by digest (RELEASING.md). With COSIGN_KEY (a key
# file; COSIGN_PASSWORD its password) the signatures are made and checked
# with that key alone, kept out of the public transparency log, and checked
# against deploy/release/cosign-trusted-root.json, a Sigstore trust root
# that trusts no authority, so that cosign fetches nothing (without one,
# verify asks Sigstore's TUF repository on the internet even with a key);
# without COSIGN_KEY, as in the release workflow, cosign signs keyless with
# the workflow's OIDC identity and records it in Rekor. INSECURE=1: the registry speaks plain
# HTTP (the rehearsal's, on loopback).
set -euo pipefail
dir=${1:?usage: sign-images.sh DIR}
cosign=${COSIGN:-$(go env GOPATH)/bin/cosign}
flags=(--yes)
verify=()
if [ -n "${INSECURE:-}" ]; then
	flags+=(--allow-http-registry --allow-insecure-registry)
	verify+=(--allow-http-registry --allow-insecure-registry)
fi
if [ -n "${COSIGN_KEY:-}" ]; then
	flags+=(--key "$COSIGN_KEY" --tlog-upload=false)
	verify+=(--key "${COSIGN_PUB:-${COSIGN_KEY%.key}.pub}" --insecure-ignore-tlog=true
		--trusted-root "$(cd "$(dirname "$0")/.." && pwd)/deploy/release/cosign-trusted-root.json")
else
	verify+=(--certificate-identity-regexp "${COSIGN_IDENTITY:-^https://github.com/defectshowcase/showcase/}" --certificate-oidc-issuer https://token.actions.githubusercontent.com)
fi
while read -r ref; do
	[ -n "$ref" ] || continue
	prog=${ref%%@*}
	prog=${prog##*/}
	prog=${prog%%:*}
	"$cosign" sign "${flags[@]}" "$ref" >/dev/null
	"$cosign" attest "${flags[@]}" --type cyclonedx --predicate "$dir/$prog.cdx.json" "$ref" >/dev/null
	"$cosign" verify "${verify[@]}" "$ref" >/dev/null
	"$cosign" verify-attestation "${verify[@]}" --type cyclonedx "$ref" >/dev/null
	echo "signed, SBOM attested, both verified: $ref"
done <"$dir/images.txt"
