//go:build showcase_nocoverage

package gateway

// countCoverage: see coverage_on.go. This build does not count API
// coverage, and is for the benchmark of its cost alone.
const countCoverage = false
