// Package tools holds the project's own programs that are not part of the
// service: showcase-bench, the benchmark harness behind make bench.
package tools
