package gateway

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/server"
)

// The scopes of the admin port's counts (?scope=): the instance's own
// (the default), or the whole deployment's, merged from every replica's.
const (
	ScopeInstance   = "instance"
	ScopeDeployment = "deployment"
)

// HeaderReplica names the replica that answered an admin request: its
// host name, which is its Pod's name on Kubernetes.
const HeaderReplica = "X-Showcase-Replica"

// DefaultPeerTimeout bounds a replica's answer to a deployment-wide
// request.
const DefaultPeerTimeout = 10 * time.Second

// maxPeerAnswer bounds what is read of a replica's answer: a code
// coverage snapshot is the largest, a few MiB.
const maxPeerAnswer = 64 << 20

// Peers are the replicas of the gateway's deployment: every address its
// DNS name has (a headless Service's, on Kubernetes: one address per
// replica, this one's too), each asked on the admin port. They are looked
// up at each request, so a replica added or gone counts from then on.
type Peers struct {
	Host, Port string // the DNS name and the admin port, from PEERS
	Timeout    time.Duration
	clientOnce sync.Once
	client     *http.Client
}

// parsePeers reads PEERS: host:port.
func parsePeers(v string) (*Peers, error) {
	host, port, err := net.SplitHostPort(v)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || host == "" || n < 1 || n > 65535 {
		return nil, errors.New("want the DNS name whose addresses are the deployment's gateway replicas and their admin port, such as gateway-peers:9090 (a headless Service)")
	}
	return &Peers{Host: host, Port: port}, nil
}

// String is the setting as given.
func (p *Peers) String() string {
	if p == nil {
		return ""
	}
	return net.JoinHostPort(p.Host, p.Port)
}

// lookupHost resolves the peers' name (a test resolves it to loopback
// addresses of its own).
var lookupHost = net.DefaultResolver.LookupHost

// lookup is the replicas' admin addresses, in order.
func (p *Peers) lookup(ctx context.Context) ([]string, error) {
	ips, err := lookupHost(ctx, p.Host)
	if err != nil {
		return nil, fmt.Errorf("the deployment's replicas (PEERS=%s): %w", p, err)
	}
	slices.Sort(ips)
	addrs := make([]string, len(ips))
	for i, ip := range ips {
		addrs[i] = net.JoinHostPort(ip, p.Port)
	}
	return addrs, nil
}

// answer is one replica's answer to a deployment-wide request.
type answer struct {
	addr, name string // its address, and the name it gave (HeaderReplica)
	body       []byte
}

// label names a replica for a person: its name and its address.
func (a answer) label() string {
	if a.name == "" {
		return a.addr
	}
	return a.name + " (" + a.addr + ")"
}

// ask sends method path to every replica at once, each with its own
// count (scope=instance), and returns their answers in the order of their
// addresses. Unless every replica answered 200, it fails naming each one
// that did not and why: a deployment's count from some of its replicas
// would pass a part for the whole. done names the replicas that did
// answer, for a request that changes them.
func (p *Peers) ask(ctx context.Context, method, path string) (answers []answer, done []string, err error) {
	addrs, err := p.lookup(ctx)
	if err != nil {
		return nil, nil, err
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultPeerTimeout
	}
	p.clientOnce.Do(func() {
		p.client = &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute}}
	})
	client := p.client
	answers = make([]answer, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			answers[i].addr = addr
			errs[i] = answers[i].fetch(ctx, client, method, "http://"+addr+path+"?scope="+ScopeInstance)
		})
	}
	wg.Wait()
	var failed []string
	for i, e := range errs {
		if e != nil {
			failed = append(failed, fmt.Sprintf("replica %s %v", answers[i].label(), e))
		} else {
			done = append(done, answers[i].label())
		}
	}
	if len(failed) > 0 {
		return nil, done, fmt.Errorf("%d of the deployment's %d replicas (PEERS=%s) did not answer, so no count is given for the whole: %s",
			len(failed), len(addrs), p, strings.Join(failed, "; "))
	}
	return answers, done, nil
}

// fetch asks one replica.
func (a *answer) fetch(ctx context.Context, client *http.Client, method, u string) error {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("did not answer: %w", err)
	}
	defer res.Body.Close()
	a.name = res.Header.Get(HeaderReplica)
	body, err := io.ReadAll(io.LimitReader(res.Body, maxPeerAnswer+1))
	switch {
	case err != nil:
		return fmt.Errorf("broke off its answer: %w", err)
	case len(body) > maxPeerAnswer:
		return fmt.Errorf("answered more than %d MiB", maxPeerAnswer>>20)
	case res.StatusCode != http.StatusOK:
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("answered %s: %s", res.Status, e.Error)
		}
		return fmt.Errorf("answered %s", res.Status)
	}
	a.body = body
	return nil
}

// replicaName is this replica's name in HeaderReplica.
var replicaName = sync.OnceValue(func() string {
	name, _ := os.Hostname()
	return name
})

// scoped answers an admin request in the scope its query asks for: the
// instance's own, or, with scope=deployment, the deployment's, which
// needs PEERS. The admin port's own checks (its refusal of a cross-site
// request) have passed before it runs, so a POST is fanned out only once
// they have.
func scoped(p *Peers, instance http.Handler, deployment func(w http.ResponseWriter, r *http.Request, p *Peers)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			respond.Error(w, http.StatusBadRequest, "the query does not parse: "+err.Error())
			return
		}
		switch scope := query.Get("scope"); scope {
		case "", ScopeInstance:
			w.Header().Set(HeaderReplica, replicaName())
			instance.ServeHTTP(w, r)
		case ScopeDeployment:
			if p == nil {
				respond.Error(w, http.StatusBadRequest, "scope=deployment: this instance does not know its deployment's replicas (set PEERS to a headless Service's name and the admin port); without it it answers for itself alone")
				return
			}
			deployment(w, r, p)
		default:
			respond.Error(w, http.StatusBadRequest, fmt.Sprintf("scope=%q: want instance (this replica's own count, the default) or deployment (every replica's, merged)", scope))
		}
	})
}

// peerFailure answers a deployment-wide request some replica failed.
func peerFailure(w http.ResponseWriter, err error) {
	respond.Error(w, http.StatusBadGateway, err.Error())
}

// DeploymentTruth is the deployment's ground truth: every replica's
// /defects, merged (catalogue.MergeTruth).
func (p *Peers) DeploymentTruth(ctx context.Context) (catalogue.Truth, error) {
	answers, _, err := p.ask(ctx, http.MethodGet, PathDefects)
	if err != nil {
		return catalogue.Truth{}, err
	}
	names := make([]string, len(answers))
	parts := make([]catalogue.Truth, len(answers))
	for i, a := range answers {
		names[i] = a.label()
		if err := json.Unmarshal(a.body, &parts[i]); err != nil {
			return catalogue.Truth{}, fmt.Errorf("replica %s answered a ground truth that does not parse: %w", names[i], err)
		}
	}
	return catalogue.MergeTruth(names, parts)
}

// deploymentCoverage is the deployment's API coverage: every replica's
// /coverage, merged (coverage.Merge).
func (p *Peers) deploymentCoverage(ctx context.Context) (*coverage.Report, error) {
	answers, _, err := p.ask(ctx, http.MethodGet, PathCoverage)
	if err != nil {
		return nil, err
	}
	reps := make([]*coverage.Report, len(answers))
	for i, a := range answers {
		reps[i] = &coverage.Report{}
		if err := json.Unmarshal(a.body, reps[i]); err != nil {
			return nil, fmt.Errorf("replica %s answered coverage that does not parse: %w", a.label(), err)
		}
	}
	return coverage.Merge(reps...)
}

func serveDeploymentTruth(w http.ResponseWriter, r *http.Request, p *Peers) {
	t, err := p.DeploymentTruth(r.Context())
	if err != nil {
		peerFailure(w, err)
		return
	}
	respond.Value(w, http.StatusOK, t)
}

func serveDeploymentCoverage(text bool) func(w http.ResponseWriter, r *http.Request, p *Peers) {
	return func(w http.ResponseWriter, r *http.Request, p *Peers) {
		rep, err := p.deploymentCoverage(r.Context())
		if err != nil {
			peerFailure(w, err)
			return
		}
		writeCoverage(w, rep, text)
	}
}

// serveDeploymentReset resets every replica. A replica that did not
// answer may keep its counts: the failure names it and the ones reset.
func serveDeploymentReset(w http.ResponseWriter, r *http.Request, p *Peers) {
	answers, done, err := p.ask(r.Context(), http.MethodPost, PathDefectsReset)
	if err != nil {
		if len(done) > 0 {
			err = fmt.Errorf("%w; reset: %s", err, strings.Join(done, ", "))
		}
		peerFailure(w, err)
		return
	}
	out := struct {
		ExposureSince time.Time `json:"exposure_since"`
		Replicas      []string  `json:"replicas"`
	}{Replicas: done}
	for _, a := range answers {
		var one struct {
			ExposureSince time.Time `json:"exposure_since"`
		}
		if err := json.Unmarshal(a.body, &one); err != nil {
			peerFailure(w, fmt.Errorf("replica %s answered its reset with %w", a.label(), err))
			return
		}
		// The deployment counts from its earliest reset: every replica
		// has counted since.
		if out.ExposureSince.IsZero() || one.ExposureSince.Before(out.ExposureSince) {
			out.ExposureSince = one.ExposureSince
		}
	}
	respond.Value(w, http.StatusOK, out)
}

// serveDeploymentCodeCoverage answers every replica's code coverage
// snapshot as one archive: the meta-data file once (the replicas run one
// build) and each replica's counters file, named apart. go tool covdata
// reads such a folder as it reads one `go tool covdata merge` wrote:
// counters of the same meta-data are summed.
func serveDeploymentCodeCoverage(w http.ResponseWriter, r *http.Request, p *Peers) {
	answers, _, err := p.ask(r.Context(), http.MethodGet, server.PathCodeCoverage)
	if err != nil {
		peerFailure(w, err)
		return
	}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	written := map[string]bool{}
	for i, a := range answers {
		tr := tar.NewReader(bytes.NewReader(a.body))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				peerFailure(w, fmt.Errorf("replica %s answered a code coverage archive that does not read: %w", a.label(), err))
				return
			}
			name := h.Name
			if f := strings.Split(name, "."); len(f) == 4 && f[0] == "covcounters" {
				// covcounters.HASH.PID.NANOS: every replica's process may
				// be PID 1 and the clocks agree; the replica's place in
				// the answer stands for its PID, to keep the names apart.
				name = fmt.Sprintf("covcounters.%s.%d.%s", f[1], i+1, f[3])
			}
			if written[name] {
				continue // the meta-data, once
			}
			written[name] = true
			h.Name = name
			if err := tw.WriteHeader(h); err != nil {
				peerFailure(w, err)
				return
			}
			if _, err := io.Copy(tw, tr); err != nil {
				peerFailure(w, err)
				return
			}
		}
	}
	if err := tw.Close(); err != nil {
		peerFailure(w, err)
		return
	}
	respond.Raw(w, http.StatusOK, "application/x-tar", out.Bytes())
}
