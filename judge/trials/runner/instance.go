package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/platform/server"
)

// instance is what a trial runs against: a fresh one, or a running
// deployment reset for it. Both are reached over HTTP, the ground truth
// from the admin port.
type instance struct {
	base, admin string
	client      *http.Client
	// since is when the instance's counts began on the runner's clock:
	// for a deployment, when its reset was sent, at most a round trip
	// before the instance began them, so an instance's time put on the
	// runner's clock is never later than it was (a finding is never judged
	// to come before a trigger that preceded it); nil for a fresh instance
	// (its clock is the runner's).
	since *time.Time
	stop  func() error
}

func newInstance(ctx context.Context, base, admin string, defects catalogue.Set, dir, binary string) (*instance, error) {
	in := &instance{base: base, admin: admin, client: &http.Client{Timeout: 30 * time.Second}, stop: func() error { return nil }}
	if base != "" {
		now := time.Now()
		if err := in.reset(ctx); err != nil {
			return nil, err
		}
		in.since = &now
		return in, nil
	}
	if binary != "" {
		return in, in.startBinary(binary, defects, filepath.Join(dir, trials.ServerLog))
	}
	return in, in.startFresh(defects, filepath.Join(dir, trials.ServerLog))
}

// startFresh starts the whole showcase in this process as make run starts
// it (server.Run with the gateway's program: its limits, timeouts and
// admin listener), with every setting at its default but the defects and
// the addresses, two ports of loopback of its own, and its log in logFile.
// It is up when its log says where it listens.
func (in *instance) startFresh(active catalogue.Set, logFile string) error {
	env := map[string]string{"DEFECTS": active.String(), "ADDR": "127.0.0.1:0", "ADMIN_ADDR": "127.0.0.1:0"}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := server.Run(ctx, gateway.Program(), nil, func(k string) string { return env[k] }, pw)
		pw.CloseWithError(errors.Join(err, io.EOF))
		done <- err
	}()
	return in.follow(pr, logFile, cancel, done)
}

// startBinary starts the showcase as a process of its own, from a binary
// (a build with Go's coverage, whose counters are the process's), on
// loopback ports of its own, and its log in logFile.
func (in *instance) startBinary(binary string, active catalogue.Set, logFile string) error {
	cmd := exec.Command(binary, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DEFECTS="+active.String())
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("the instance %s: %w", binary, err)
	}
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.CloseWithError(io.EOF)
		if err != nil && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == -1 {
			err = nil // stopped by its signal, as asked
		}
		done <- err
	}()
	stop := func() { _ = cmd.Process.Signal(syscall.SIGTERM) }
	return in.follow(pr, logFile, stop, done)
}

// follow copies the instance's log to logFile and waits until it says
// where it listens; stop ends the instance, done says when it has.
func (in *instance) follow(pr *io.PipeReader, logFile string, stop func(), done chan error) error {
	log, err := os.Create(logFile)
	if err != nil {
		stop()
		<-done
		return err
	}
	// The log: copied to its file; the "listening" line names the addresses.
	addrs := make(chan [2]string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer log.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			_, _ = log.Write(append(line, '\n'))
			var l struct{ Msg, Addr, Admin string }
			if bytes.Contains(line, []byte(`"listening"`)) && json.Unmarshal(line, &l) == nil && l.Msg == "listening" {
				select {
				case addrs <- [2]string{l.Addr, l.Admin}:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	in.stop = func() error {
		stop()
		err := <-done
		<-copied
		return err
	}
	select {
	case a := <-addrs:
		in.base, in.admin = "http://"+a[0], "http://"+a[1]
		return nil
	case err := <-done:
		<-copied
		return fmt.Errorf("the instance did not start: %v (its log: %s)", err, logFile)
	case <-time.After(30 * time.Second):
		_ = in.stop()
		return fmt.Errorf("the instance did not start in 30 s (its log: %s)", logFile)
	}
}

func (in *instance) URL() string       { return in.base }
func (in *instance) Since() *time.Time { return in.since }
func (in *instance) Close() error      { return in.stop() }

func (in *instance) reset(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.admin+gateway.PathDefectsReset, nil)
	if err != nil {
		return err
	}
	res, err := in.client.Do(req)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("reset: %s answered %s", in.admin, res.Status)
	}
	return nil
}

// Truth is the instance's ground truth with its counts, as served,
// indented.
func (in *instance) Truth(ctx context.Context) ([]byte, error) {
	return agent.FetchTruth(ctx, in.client, in.admin)
}

// Coverage is the instance's API coverage so far.
func (in *instance) Coverage(ctx context.Context) (*coverage.Report, error) {
	c, _, err := agent.FetchCoverage(ctx, in.client, in.admin)
	return c, err
}
