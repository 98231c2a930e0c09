//go:build !showcase_nocoverage

package gateway

// countCoverage is whether the gateway counts API coverage. Built with
// -tags showcase_nocoverage it does not: for the benchmark of what
// counting costs (showcase-bench -coverage-cost), and nothing else.
const countCoverage = true
