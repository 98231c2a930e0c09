// Package tools holds the project's own programs that are not part of the
// service: showcase-bench, the benchmark harness behind make bench, and
// showcase-truth, which writes the ground truth the gateway serves at /defects.
package tools
