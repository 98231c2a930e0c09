// Package tools holds the project's harnesses that are not part of the
// service: showcase-bench, the benchmark harness behind make bench;
// showcase-load, the load test; showcase-dashboard, the dashboard's picture.
// The instrument that judges tools (scoring, trials) is in judge/.
package tools
