package server

import (
	"archive/tar"
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"runtime/coverage"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/platform/respond"
)

// PathCodeCoverage is where a build with Go's coverage (make build COVER=1)
// serves a snapshot of its counters: a tar archive of Go's own coverage
// data files, the meta-data (the same at every snapshot) and the counters
// as they are now, which `go tool covdata` reads (judge/codecov). A build
// without coverage answers 404.
const PathCodeCoverage = "/coverage/code"

// codeMeta is the build's coverage meta-data and its file name, written
// once.
var codeMeta = sync.OnceValues(func() (*coverageFile, error) {
	var b bytes.Buffer
	if err := coverage.WriteMeta(&b); err != nil {
		return nil, err
	}
	// The file is named by the hash its header carries (Go's meta-data
	// file format: magic, version, length and entries before the hash).
	const hashAt, hashLen = 24, 16
	if b.Len() < hashAt+hashLen {
		return nil, fmt.Errorf("coverage meta-data of %d bytes", b.Len())
	}
	hash := hex.EncodeToString(b.Bytes()[hashAt : hashAt+hashLen])
	return &coverageFile{name: "covmeta." + hash, hash: hash, data: b.Bytes()}, nil
})

type coverageFile struct {
	name, hash string
	data       []byte
}

// CodeCoverageBuilt reports whether this binary was built with Go's
// coverage.
func CodeCoverageBuilt() bool {
	_, err := codeMeta()
	return err == nil
}

// ClearCodeCoverage sets the counters of a coverage build to zero (the
// gateway's reset does, with the exposure); elsewhere it does nothing.
func ClearCodeCoverage() {
	if CodeCoverageBuilt() {
		_ = coverage.ClearCounters() // built with -covermode=atomic: it cannot fail
	}
}

// CodeCoverage answers a snapshot of the counters at PathCodeCoverage.
var CodeCoverage http.Handler = http.HandlerFunc(serveCodeCoverage)

func serveCodeCoverage(w http.ResponseWriter, _ *http.Request) {
	meta, err := codeMeta()
	if err != nil {
		respond.Error(w, http.StatusNotFound, "this build has no code coverage: build it with make build COVER=1 (go build -cover)")
		return
	}
	var counters bytes.Buffer
	if err := coverage.WriteCounters(&counters); err != nil {
		respond.Error(w, http.StatusInternalServerError, "coverage counters: "+err.Error())
		return
	}
	now := time.Now()
	files := []coverageFile{*meta, {name: fmt.Sprintf("covcounters.%s.%d.%d", meta.hash, os.Getpid(), now.UnixNano()), data: counters.Bytes()}}
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
			respond.Error(w, http.StatusInternalServerError, err.Error())
			return
		}
		_, _ = tw.Write(f.data)
	}
	_ = tw.Close()
	respond.Raw(w, http.StatusOK, "application/x-tar", archive.Bytes())
}
