package trials

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// instance is what a trial runs against: a fresh one, or a running
// deployment reset for it.
type instance interface {
	URL() string
	// Truth is the ground truth with its counts, decoded and as served.
	Truth(ctx context.Context) (catalogue.Truth, []byte, error)
	Close() error
}

func newInstance(ctx context.Context, o Options) (instance, error) {
	if o.Base != "" {
		r := &remote{base: o.Base, admin: o.Admin, client: &http.Client{Timeout: 30 * time.Second}}
		return r, r.reset(ctx)
	}
	return startFresh(o.Defects)
}

// fresh is the whole showcase in this process, as make run starts it, on
// a port of loopback of its own: its counts begin with it.
type fresh struct {
	built  server.Built
	srv    *http.Server
	url    string
	closed chan struct{}
}

func startFresh(active catalogue.Set) (*fresh, error) {
	env := map[string]string{"DEFECTS": active.String()}
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, observe.Discard())
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = built.Close()
		return nil, err
	}
	f := &fresh{built: built, srv: &http.Server{Handler: built.Handler, ReadHeaderTimeout: 10 * time.Second}, url: "http://" + ln.Addr().String(), closed: make(chan struct{})}
	go func() {
		defer close(f.closed)
		_ = f.srv.Serve(ln)
	}()
	return f, nil
}

func (f *fresh) URL() string { return f.url }

func (f *fresh) Truth(context.Context) (catalogue.Truth, []byte, error) {
	rec := httptest.NewRecorder()
	f.built.Admin["GET "+gateway.PathDefects].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathDefects, nil))
	return decodeTruth(rec.Body.Bytes())
}

func (f *fresh) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := f.srv.Shutdown(ctx)
	<-f.closed
	if cerr := f.built.Close(); err == nil {
		err = cerr
	}
	return err
}

// remote is a running deployment: its API, and its admin port for the
// reset and the ground truth.
type remote struct {
	base, admin string
	client      *http.Client
}

func (r *remote) URL() string  { return r.base }
func (r *remote) Close() error { return nil }

func (r *remote) reset(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.admin+gateway.PathDefectsReset, nil)
	if err != nil {
		return err
	}
	res, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("reset: %s answered %s", r.admin, res.Status)
	}
	return nil
}

func (r *remote) Truth(ctx context.Context) (catalogue.Truth, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.admin+gateway.PathDefects, nil)
	if err != nil {
		return catalogue.Truth{}, nil, err
	}
	res, err := r.client.Do(req)
	if err != nil {
		return catalogue.Truth{}, nil, fmt.Errorf("the ground truth: %w", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil || res.StatusCode != http.StatusOK {
		return catalogue.Truth{}, nil, fmt.Errorf("the ground truth: %s %v", res.Status, err)
	}
	return decodeTruth(raw)
}

func decodeTruth(raw []byte) (catalogue.Truth, []byte, error) {
	var t catalogue.Truth
	if err := json.Unmarshal(raw, &t); err != nil {
		return t, nil, fmt.Errorf("the ground truth: %w", err)
	}
	if t.Requests == nil || t.ExposureSince == nil {
		return t, nil, fmt.Errorf("the ground truth is of version %d, without the counts a trial needs (version %d)", t.Version, catalogue.Version)
	}
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, raw, "", "  ")
	return t, pretty.Bytes(), nil
}
