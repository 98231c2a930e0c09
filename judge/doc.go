// Package judge is the instrument that judges API-testing tools against the
// showcase's ground truth: score reads a tool's report and scores it
// (showcase-score), showcase-truth writes the ground truth as a file.
package judge
