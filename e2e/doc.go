// Package e2e is the end-to-end tests' one home: the tests that build and
// run the real binaries (as one process, as five, under a flood, behind a
// real Prometheus, under the load test), drive the pages in a real Chromium, bring up
// the compose deployment on the Docker engine and build the Kubernetes
// manifests against the API types. It is a module of its own so that those
// tests' dependencies stay out of the services.
package e2e
