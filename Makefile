# The defect showcase API. `make run` serves everything on :8080;
# `make test` runs every module's tests with the race detector;
# `make help` lists every target.

SHELL   := /bin/bash
GO      ?= go
# go test ./... does not cross module borders at a workspace root: loop.
MODULES := $(shell $(GO) list -m -f '{{.Dir}}')
CMDS    := gateway security-svc errors-svc conformance-svc performance-svc
BIN     := bin

.PHONY: help run run-split test test-deps test-modules release-snapshot release release-images release-chart test-release lint fuzz build images compose-up compose-down kube-up kube-prometheus kube-status kube-down bench loadtest trials scoreboard clean

IMAGE_PREFIX ?= defect-showcase
# The image tag, for make images and for compose alike (deploy/compose.yaml reads it too).
SHOWCASE_TAG ?= latest
COMPOSE      ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
# Compose's project name, the prefix of its containers and networks.
COMPOSE_PROJECT_NAME ?= defect-showcase
STATICCHECK  := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The version the binaries print with -version: git's description of this checkout, if any.
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS      := -s -w $(if $(VERSION),-X github.com/defectshowcase/showcase/platform/version.Version=$(VERSION))
# COVER=1: the five programs built with Go's coverage over the code a request
# runs (the services, the gateway's request path, platform), for the code
# coverage their admin port serves (/coverage/code): make build puts them in
# bin/cover, make images tags them -cover (docs/coverage.md).
COVER        ?=
space        := $(subst ,, )
comma        := ,
COVERPKG     := $(subst $(space),$(comma),$(addprefix github.com/defectshowcase/showcase/,gateway gateway/cmd/... platform/... security-svc/... errors-svc/... conformance-svc/... performance-svc/...))
ifneq ($(COVER),)
BIN          := bin/cover
COVERFLAGS   := -cover -covermode=atomic -coverpkg
TAG_SUFFIX   := -cover
endif

## help: every target, with what it does
help:
	@awk '/^## [a-z-]+: / { sub(/^## /, ""); target = $$0; sub(/: .*/, "", target); sub(/^[a-z-]+: /, ""); printf "  %-14s %s\n", target, $$0 }' $(firstword $(MAKEFILE_LIST))

## run: the whole service in one process on :8080 (ADDR to change it)
run:
	$(GO) run ./gateway/cmd/gateway

## run-split: the four services and the gateway as five processes: API ports PORT to PORT+4 (default 8080), admin ADMIN_PORT to ADMIN_PORT+4 (default PORT+1010)
PORT ?= 8080
run-split: build
	PORT=$(PORT) ADMIN_PORT=$(ADMIN_PORT) ./scripts/run-split.sh $(BIN)

## test: everything .ci/run runs: test-deps beside lint and test-modules, then every module's tests with -race, e2e beside the others (scripts/test.sh)
test:
	@GO=$(GO) MAKE=$(MAKE) ./scripts/test.sh

## test-deps: install what the end-to-end tests drive for real (Prometheus, Chromium, the proxies, Kubernetes)
test-deps:
	@./scripts/test-deps.sh

## test-modules: each released module vets (its imports compiled, its own packages type-checked) with GOWORK=off and its go.mod as a release carries it, its siblings from a module proxy of the working copy (showcase-release check)
test-modules:
	$(GO) run ./tools/cmd/showcase-release check

## lint: go vet and staticcheck (pinned) over every module
lint:
	@set -e; for d in $(MODULES); do \
		(cd $$d && $(GO) vet ./... && GOFLAGS= $(GO) run $(STATICCHECK) ./...); \
	done

## fuzz: every fuzz target for FUZZTIME (default 1m) each; make test runs their seed corpora
FUZZTIME ?= 1m
FUZZ_TARGETS := platform/reqparse:FuzzQueryFirst platform/reqparse:FuzzParseInt platform/reqparse:FuzzDecodeObject \
	gateway:FuzzEndpoints gateway:FuzzEndpointsDefectsOff gateway:FuzzEndpointsMutants gateway:FuzzGatewayRouting gateway:FuzzRawHTTPModes gateway:FuzzMembers judge/score:FuzzRead
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$pkg; \
	done

## build: static binaries of the five programs, the scorer showcase-score, the trial runner showcase-trials, its reference tool showcase-replay and its in-Pod agent showcase-agent, and the load test showcase-load, in ./bin (COVER=1: the five with Go's coverage, in ./bin/cover)
build:
	@mkdir -p $(BIN)
	@set -e; for c in $(CMDS); do \
		pkgs=$(COVERPKG); [ $$c = gateway ] || pkgs=github.com/defectshowcase/showcase/$$c/...,github.com/defectshowcase/showcase/platform/...; \
		CGO_ENABLED=0 $(GO) build -trimpath $(if $(COVER),$(COVERFLAGS)=$$pkgs) -ldflags='$(LDFLAGS)' -o $(BIN)/$$c ./$$c/cmd/$$c; \
	done
ifeq ($(COVER),)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(LDFLAGS)' -o $(BIN)/showcase-score ./judge/cmd/showcase-score
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(LDFLAGS)' -o $(BIN)/showcase-trials ./judge/cmd/showcase-trials
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(LDFLAGS)' -o $(BIN)/showcase-replay ./judge/cmd/showcase-replay
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(LDFLAGS)' -o $(BIN)/showcase-truth ./judge/cmd/showcase-truth
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(LDFLAGS)' -o $(BIN)/showcase-agent ./judge/cmd/showcase-agent
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(LDFLAGS)' -o $(BIN)/showcase-load ./tools/cmd/showcase-load
endif

## images: the five images, and for trials on a cluster the agent's and the reference tool's (showcase-replay on its PATH), FROM scratch with the binaries built here (no image is pulled); COVER=1: the five with Go's coverage, tagged $(SHOWCASE_TAG)-cover
images: build
	@set -e; for c in $(CMDS) $(if $(COVER),,showcase-agent); do \
		docker build -q --target prebuilt --build-arg SERVICE=$$c --build-arg BIN=$(BIN) -t $(IMAGE_PREFIX)/$$c:$(SHOWCASE_TAG)$(TAG_SUFFIX) . >/dev/null 2>&1 || docker build --target prebuilt --build-arg SERVICE=$$c --build-arg BIN=$(BIN) -t $(IMAGE_PREFIX)/$$c:$(SHOWCASE_TAG)$(TAG_SUFFIX) .; \
		docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' $(IMAGE_PREFIX)/$$c:$(SHOWCASE_TAG)$(TAG_SUFFIX); \
	done
ifeq ($(COVER),)
	@docker build -q --target replay -t $(IMAGE_PREFIX)/showcase-replay:$(SHOWCASE_TAG) . >/dev/null 2>&1 || docker build --target replay -t $(IMAGE_PREFIX)/showcase-replay:$(SHOWCASE_TAG) .
	@docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' $(IMAGE_PREFIX)/showcase-replay:$(SHOWCASE_TAG)
endif

## test-release: the release rehearsed as a user meets it (e2e TestRelease, build tag release; as root): make release-snapshot, release-images against a registry on loopback, signed and verified, release-chart, the chart installed from there on kube-up's node; not in make test, whose 70 minutes its builds would break (RELEASING.md)
test-release:
	@./scripts/release-deps.sh
	@./scripts/kube-deps.sh
	cd e2e && $(GO) test -tags release -count=1 -timeout 90m -run '^TestRelease$$' -v .

## release-snapshot: rehearse a release (goreleaser v2, .goreleaser.yaml, built first if missing): every program for linux, darwin and windows on amd64 and arm64, an archive per platform with LICENSE, README and CHANGELOG, checksums and a CycloneDX SBOM per archive, in dist/ (RELEASING.md)
GORELEASER ?= $(shell $(GO) env GOPATH)/bin/goreleaser
release-snapshot:
	@$(MAKE) --no-print-directory goreleaser GORELEASER_ARGS="--snapshot"

## release: the release of the tag at HEAD, published as a draft GitHub release (GITHUB_TOKEN), its notes CHANGELOG.md's section of the version; what .github/workflows/release.yml runs
# HEAD carries the modules' tags too (gateway/vX.Y.Z, ...): the release's is the root's.
release:
	@tag=$$(git describe --tags --exact-match --match 'v[0-9]*' HEAD) && notes=$$(mktemp) && \
		$(GO) run ./tools/cmd/showcase-release notes "$$tag" >"$$notes" && \
		GORELEASER_CURRENT_TAG=$$tag $(MAKE) --no-print-directory goreleaser GORELEASER_ARGS="--release-notes $$notes"; status=$$?; rm -f "$$notes"; exit $$status

## release-images: the images of the release in dist/ (make release or release-snapshot) pushed to IMAGE_REPO as IMAGE_VERSION, one OCI index of linux/amd64 and linux/arm64 per program, FROM scratch, nothing pulled (showcase-image), each signed with cosign and its SBOM attested (COSIGN_KEY, or keyless in the release workflow); INSECURE=1 for a plain-HTTP registry
IMAGE_REPO    ?= ghcr.io/defectshowcase
IMAGE_VERSION ?= $(shell git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null)
release-images:
	@test -n "$(IMAGE_VERSION)" || { echo "release-images: IMAGE_VERSION (HEAD has no tag)"; exit 1; }
	@./scripts/release-deps.sh cosign
	$(GO) run ./tools/cmd/showcase-image -dist dist -repo $(IMAGE_REPO) -tag $(IMAGE_VERSION) $(if $(INSECURE),-insecure)
	INSECURE=$(INSECURE) ./scripts/sign-images.sh dist/images

## release-chart: the Helm chart (deploy/helm/defect-showcase) packaged at IMAGE_VERSION and pushed to CHART_REPO as an OCI chart (helm push); INSECURE=1 for a plain-HTTP registry
CHART_REPO ?= oci://ghcr.io/defectshowcase/charts
release-chart:
	@test -n "$(IMAGE_VERSION)" || { echo "release-chart: IMAGE_VERSION (HEAD has no tag)"; exit 1; }
	@./scripts/release-deps.sh helm
	@mkdir -p dist/chart
	$(HELM) lint --strict deploy/helm/defect-showcase
	$(HELM) package deploy/helm/defect-showcase --version $(patsubst v%,%,$(IMAGE_VERSION)) --app-version $(IMAGE_VERSION) -d dist/chart
	$(HELM) push dist/chart/defect-showcase-$(patsubst v%,%,$(IMAGE_VERSION)).tgz $(CHART_REPO) $(if $(INSECURE),--plain-http)
HELM ?= $(shell $(GO) env GOPATH)/bin/helm

.PHONY: goreleaser
goreleaser:
	@./scripts/release-deps.sh goreleaser
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/showcase-sbom ./tools/cmd/showcase-sbom
	PATH="$(abspath $(BIN)):$$PATH" SHOWCASE_VERSION=$$($(GO) run ./tools/cmd/showcase-release version) $(GORELEASER) release --clean $(GORELEASER_ARGS)

## compose-up: the five containers (make images first); API :8080, admin :9090
compose-up:
	SHOWCASE_TAG=$(SHOWCASE_TAG) $(COMPOSE) -p $(COMPOSE_PROJECT_NAME) -f deploy/compose.yaml up -d
	@echo "waiting for the gateway to be healthy"; for i in $$(seq 60); do \
		[ "$$(docker inspect -f '{{.State.Health.Status}}' $$($(COMPOSE) -p $(COMPOSE_PROJECT_NAME) -f deploy/compose.yaml ps -q gateway) 2>/dev/null)" = healthy ] && { echo ready; exit 0; }; \
		sleep 1; done; echo "the gateway did not become healthy"; exit 1

## compose-down: stop and remove the containers and networks
compose-down:
	$(COMPOSE) -p $(COMPOSE_PROJECT_NAME) -f deploy/compose.yaml down -v --remove-orphans

## kube-up: a real Kubernetes on this machine (as root; builds the images): NODES (1: the control plane's node alone; 3: and two workers), OVERLAY (base, embedded, defects-off; none: the nodes alone, for the Helm chart), API on 127.0.0.1:PORT (8080), admin on 127.0.0.1:ADMIN_PORT (9090); REGISTRY=10.243.255.1:PORT lets it pull from a registry there (NODES=1)
OVERLAY ?= base
kube-up: images
	@./scripts/kube-deps.sh
	NODES=$(or $(NODES),1) OVERLAY=$(OVERLAY) REGISTRY=$(REGISTRY) PORT=$(PORT) ADMIN_PORT=$(or $(ADMIN_PORT),9090) SHOWCASE_TAG=$(SHOWCASE_TAG) IMAGE_PREFIX=$(IMAGE_PREFIX) ./scripts/kube-node.sh up

## kube-prometheus: Prometheus in the node of kube-up, discovering the Pods itself (deploy/k8s/prometheus); its API on 127.0.0.1:PROM_PORT (9099)
kube-prometheus:
	PROM_PORT=$(or $(PROM_PORT),9099) ./scripts/kube-node.sh prometheus

## kube-status: whether the node of kube-up is up, its URLs and its KUBECONFIG
kube-status:
	@./scripts/kube-node.sh status || true

## kube-down: stop and remove everything kube-up made (processes, containers, images, links, rules, mounts, cgroups, files), the sysctls put back
kube-down:
	./scripts/kube-node.sh down

## bench: the benchmark harness (wrk; nginx, HAProxy and Caddy as reference proxies; report in out/bench/report.md; the floor table under a half-core quota in out/bench/floor.md, root needed; coverage's cost in out/bench/coverage-cost.md), then the Go benchmarks
bench:
	@command -v wrk >/dev/null && command -v nginx >/dev/null && command -v haproxy >/dev/null && command -v caddy >/dev/null || { echo "bench: installing wrk, nginx, HAProxy and Caddy from Debian"; apt-get update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk nginx-light haproxy caddy >/dev/null; }
	$(GO) run ./tools/cmd/showcase-bench -out out/bench
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./performance-svc/
	$(GO) test -run '^$$' -bench Isolation -benchtime 2000x ./gateway/
	$(GO) test -run '^$$' -bench . -benchmem ./platform/routes/ ./platform/respond/
	$(GO) test -run '^$$' -bench Proxy -benchmem ./gateway/
	$(GO) test -run '^$$' -bench StageRecording -benchtime 20000x ./gateway/
	$(GO) test -run '^$$' -bench MutantCost -benchtime 5x ./gateway/
	$(GO) test -run '^$$' -bench RequestParallel -cpu 1,2,4,8 -benchtime 100000x ./gateway/
	GOGC=off GOMEMLIMIT=2GiB $(GO) test -run '^$$' -bench RequestParallel -cpu 1,2,4,8 -benchtime 100000x ./gateway/
	$(GO) test -run '^$$' -bench BoardsOpen -benchtime 8000x ./gateway/
	$(GO) test -run '^$$' -bench Pages -benchmem ./gateway/web/
	$(GO) test -run '^$$' -bench BodyMemory -benchtime 1x ./e2e/
	$(GO) test -run '^$$' -bench CoverBuild -benchtime 1x ./e2e/
	$(GO) test -run '^$$' -bench ReadGrowing -benchtime 1x ./judge/score/

## loadtest: the load test (showcase-load) against a running service: BASE_URL, RATE per second, DURATION, OUT (a directory for the raw results)
BASE_URL ?= http://localhost:8080
RATE     ?= 20
DURATION ?= 1m
loadtest:
	$(GO) run ./tools/cmd/showcase-load -base $(BASE_URL) -rate $(RATE) -duration $(DURATION) $(if $(OUT),-out $(OUT))

## trials: TRIALS_N (10) trials each of the reference tool and the weak one, against fresh instances planting TRIALS_DEFECTS (all; mutants for a mutant set per trial, docs/trials.md), and the report over them in TRIALS_OUT (default out/trials), with their API coverage (COVERAGE=api; none, or code after make build COVER=1)
TRIALS_OUT     ?= out/trials
TRIALS_N       ?= 10
TRIALS_DEFECTS ?= all
COVERAGE       ?= api
trials: build
	$(BIN)/showcase-trials -out $(TRIALS_OUT) -defects $(TRIALS_DEFECTS) $(if $(filter-out none,$(COVERAGE)),-coverage $(COVERAGE)) \
		-tool replay -trials $(TRIALS_N) -budget 1m -- $(abspath $(BIN))/showcase-replay -defects {defects} -base {url} -out {out}/report.csv \
		-tool weak -trials $(TRIALS_N) -budget 1m -- $(abspath $(BIN))/showcase-replay -weak -seed {seed} -defects {defects} -base {url} -out {out}/report.csv

## scoreboard: rewrite the README's scoreboard and docs/scoring.md's scorecard (and their charts in docs/) from the real reports in judge/score/testdata
scoreboard:
	$(GO) test ./judge/cmd/showcase-score -run '^TestReadmeScoreboard$$' -count=1 -update

## clean: remove the built binaries and the rehearsed release
clean:
	rm -rf $(BIN) dist
