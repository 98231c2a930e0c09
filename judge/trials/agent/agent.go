// Package agent is what runs a trial inside its Pod on a cluster, and how
// the trial's folder comes back: showcase-agent, copied into the Pod by an
// init container (as Tekton's entrypoint is), runs the tool within its
// budget and stops it as the runner does on its own machine (package
// budget), takes the instance's ground truth from the sidecar over the
// Pod's loopback, and writes the trial's folder to its standard output as
// a gzipped tar in base64 lines between two markers. The runner reads it
// from the container's log, the one channel it needs besides the Pod
// itself (Pods and their logs: no exec, no volume it must reach).
package agent

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
)

// PathDefects is the admin port's ground truth (the gateway's).
const PathDefects = "/defects"

// ResultFile is what the agent says of the run, in the trial's folder.
const ResultFile = "agent.json"

// ExitStopped is the agent's exit status when a signal stopped the trial
// (its Pod was deleted or evicted), after it wrote the folder: 128+15, as
// a shell reports SIGTERM. Kubernetes then counts its Pod failed, not
// succeeded, so that the Job may run the trial again; the runner, when
// it deleted the Job itself, reads the folder as an interrupted trial.
const ExitStopped = 143

// Result is how the tool ran, as the agent saw it, on the node's clock.
type Result struct {
	Start    time.Time       `json:"start"`
	Seconds  float64         `json:"seconds"`
	Outcome  string          `json:"outcome"`
	ExitCode int             `json:"exit_code"`
	Signals  []trials.Signal `json:"signals,omitempty"`
	Machine  *trials.Machine `json:"machine,omitempty"`
	Command  []string        `json:"command"`
	// ToolVersion is what the tool printed for --version, if it did.
	ToolVersion string `json:"tool_version,omitempty"`
	Error       string `json:"error,omitempty"` // what went wrong around the tool (the ground truth, the folder)
	Version     string `json:"agent_version,omitempty"`
}

// FetchTruth is the instance's ground truth with its counts, from its
// admin URL, indented.
func FetchTruth(ctx context.Context, client *http.Client, admin string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, admin+PathDefects, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the ground truth: %w", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the ground truth: %s %v", res.Status, err)
	}
	var t catalogue.Truth
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("the ground truth: %w", err)
	}
	if t.Requests == nil || t.ExposureSince == nil {
		return nil, fmt.Errorf("the ground truth is of version %d, without the counts a trial needs (version %d)", t.Version, catalogue.Version)
	}
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, raw, "", "  ")
	return pretty.Bytes(), nil
}

// The markers around the folder in the log.
const (
	begin = "showcase-agent: folder begins"
	end   = "showcase-agent: folder ends "
)

// MaxFolder is the most a folder may weigh, gzipped, to come back
// through the log (a kubelet rotates a container's log at 10 MiB by
// default, but follows it across the rotation).
const MaxFolder = 64 << 20

// WriteFolder writes dir (its regular files) to w as a gzipped tar, in
// base64 lines of 76 characters between the markers, the last naming the
// tar's SHA-256.
func WriteFolder(w io.Writer, dir string) error {
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, fi.Size())
		if tgz.Len() > MaxFolder {
			return fmt.Errorf("the folder is above %d MiB gzipped", MaxFolder>>20)
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	sum := sha256.Sum256(tgz.Bytes())
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, begin)
	enc := base64.StdEncoding.EncodeToString(tgz.Bytes())
	for len(enc) > 0 {
		n := min(76, len(enc))
		bw.WriteString(enc[:n])
		bw.WriteByte('\n')
		enc = enc[n:]
	}
	fmt.Fprintln(bw, end+hex.EncodeToString(sum[:])+" "+strconv.Itoa(tgz.Len()))
	return bw.Flush()
}

// ErrNoFolder is a log that ended before its folder did.
var ErrNoFolder = errors.New("the agent's log holds no whole folder")

// ReadFolder reads a log that WriteFolder wrote into (among other lines)
// and unpacks the folder into dir, checking its digest; it refuses a path
// that would leave dir.
func ReadFolder(log io.Reader, dir string) error {
	sc := bufio.NewScanner(log)
	sc.Buffer(nil, 1<<20)
	var b64 strings.Builder
	in, sum := false, ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == begin:
			in = true
			b64.Reset()
		case in && strings.HasPrefix(line, end):
			sum, _, _ = strings.Cut(strings.TrimPrefix(line, end), " ")
			in = false
		case in:
			b64.WriteString(line)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if sum == "" {
		return ErrNoFolder
	}
	tgz, err := base64.StdEncoding.DecodeString(b64.String())
	if err != nil {
		return fmt.Errorf("the agent's folder: %w", err)
	}
	if got := sha256.Sum256(tgz); hex.EncodeToString(got[:]) != sum {
		return errors.New("the agent's folder: its SHA-256 is not the one it was sent with")
	}
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || !fs.ValidPath(name) {
			return fmt.Errorf("the agent's folder: %q is not a file of it", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}
