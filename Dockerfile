# One image per program (SERVICE = gateway, security-svc, errors-svc,
# conformance-svc or performance-svc): a static binary in an empty image,
# run as a non-root user, that checks its own health (`/service healthcheck`).
#
# Two ways to build, one file:
#
# - From binaries compiled on this machine, pulling no image (what `make
#   images` and the tests do; works with the classic builder):
#       make build
#       docker build --target prebuilt --build-arg SERVICE=gateway -t defect-showcase/gateway .
#
# - From source, the usual multi-stage way, for machines with registry access
#   (BuildKit, the default builder since Docker 23, skips the prebuilt stage):
#       docker build --build-arg SERVICE=gateway -t defect-showcase/gateway .

ARG SERVICE=gateway

FROM scratch AS prebuilt
ARG SERVICE
# bin/cover for the builds with Go's coverage (make images COVER=1).
ARG BIN=bin
COPY ${BIN}/${SERVICE} /service
USER 65532:65532
EXPOSE 8080-8084 9090-9094
ENTRYPOINT ["/service"]

# The reference tool's image, for trials on a cluster (showcase-trials -on
# kube): showcase-replay on the PATH, as a tool's published image has its
# program.
FROM scratch AS replay
COPY bin/showcase-replay /usr/local/bin/showcase-replay
ENV PATH=/usr/local/bin
USER 65532:65532
ENTRYPOINT ["showcase-replay"]

FROM golang:1.26 AS build
ARG SERVICE
WORKDIR /src
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/service ./${SERVICE}/cmd/${SERVICE}

FROM scratch AS image
COPY --from=build /out/service /service
USER 65532:65532
EXPOSE 8080-8084 9090-9094
ENTRYPOINT ["/service"]
