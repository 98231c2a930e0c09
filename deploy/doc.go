// Package deploy holds the deployment assets (compose, Kubernetes,
// Prometheus, Grafana, load test) and the tests that prove them on a real
// Docker engine and against the Kubernetes API types. It is a module of its
// own so that those tests' dependencies stay out of the services.
package deploy
