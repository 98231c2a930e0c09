// Command netprobe runs in a Pod on the project's single-node cluster
// (e2e/kubenode_test.go): it tries to reach an address outside the
// cluster, by DNS queries sent straight to it and by TCP connections,
// resolves one name of the cluster and one outside it through the
// cluster's DNS, sends GET requests to a URL, each on a new connection,
// and opens TCP connections to addresses of the cluster (a NetworkPolicy's
// test), each until it connects or its time is up; with -suite, it sends
// the endpoint suite's every case (every defect active) to a base URL, one
// after another, each on a new connection, so that a Service spreads them
// over its Pods. It prints what happened as one JSON object and exits 0:
// the test judges.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/suite"
)

type result struct {
	OutsideDNS   []string          `json:"outside_dns"`   // per query: "answered" or the error
	OutsideTCP   []string          `json:"outside_tcp"`   // per connection: "connected" or the error
	ClusterName  []string          `json:"cluster_name"`  // the addresses of -cluster-name
	ClusterErr   string            `json:"cluster_err"`   // or why it did not resolve
	OutsideName  string            `json:"outside_name"`  // "not found", "resolved", or the error
	HTTPStatuses map[string]int    `json:"http_statuses"` // status (or error) -> count
	SuiteSent    int               `json:"suite_sent"`    // the suite's cases sent
	SuiteErrors  []string          `json:"suite_errors"`  // the cases that got no answer, and why
	TCP          map[string]string `json:"tcp"`           // address -> "connected" or the last error
}

func main() {
	outside := flag.String("outside", "203.0.113.1", "an address outside the cluster")
	n := flag.Int("n", 3, "DNS queries and TCP connections to send to -outside")
	clusterName := flag.String("cluster-name", "gateway", "a name the cluster's DNS knows")
	outsideName := flag.String("outside-name", "example.com.", "a name outside the cluster")
	url := flag.String("http", "", "a URL to GET")
	count := flag.Int("http-n", 0, "how many GETs")
	tcp := flag.String("tcp", "", "addresses (host:port, comma-separated) to open a TCP connection to")
	suiteBase := flag.String("suite", "", "a base URL to send the endpoint suite's cases to")
	tcpFor := flag.Duration("tcp-for", 10*time.Second, "how long to keep trying each -tcp address (a new Pod may be let through only once the NetworkPolicy implementation has seen it)")
	flag.Parse()

	var r result
	for i := 0; i < *n; i++ {
		r.OutsideDNS = append(r.OutsideDNS, askOutside(*outside))
		r.OutsideTCP = append(r.OutsideTCP, dialOutside(*outside))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, *clusterName)
	r.ClusterName = addrs
	if err != nil {
		r.ClusterErr = err.Error()
	}
	_, err = net.DefaultResolver.LookupHost(ctx, *outsideName)
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		r.OutsideName = "resolved"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		r.OutsideName = "not found"
	default:
		r.OutsideName = err.Error()
	}
	r.HTTPStatuses = map[string]int{}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < *count; i++ {
		resp, err := client.Get(*url)
		if err != nil {
			r.HTTPStatuses[err.Error()]++
			continue
		}
		resp.Body.Close()
		r.HTTPStatuses[fmt.Sprint(resp.StatusCode)]++
	}
	if *suiteBase != "" {
		// One at a time, as the one process they are compared with gets
		// them: endpoint 10's queue answers 503 only under concurrency.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		for _, ep := range suite.Endpoints() {
			for _, c := range ep.Cases {
				c = ep.For(c, catalogue.All())
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				if _, err := suite.Do(ctx, client, *suiteBase, c); err != nil {
					r.SuiteErrors = append(r.SuiteErrors, c.Method+" "+c.Target+": "+err.Error())
				}
				cancel()
				r.SuiteSent++
			}
		}
	}
	r.TCP = map[string]string{}
	if *tcp != "" {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, addr := range strings.Split(*tcp, ",") {
			wg.Go(func() {
				got := dialUntil(addr, *tcpFor)
				mu.Lock()
				r.TCP[addr] = got
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
}

// dialUntil opens a TCP connection to addr, again every 250 ms until one
// connects or the time is up: "connected", or the last error.
func dialUntil(addr string, limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return "connected"
		}
		if time.Now().After(deadline) {
			return err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// askOutside sends one DNS query for the root's NS records straight to
// addr:53, over UDP, and waits a second for an answer.
func askOutside(addr string) string {
	conn, err := net.DialTimeout("udp", net.JoinHostPort(addr, "53"), time.Second)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	query := []byte{0x53, 0x43, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1}
	if _, err := conn.Write(query); err != nil {
		return err.Error()
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := conn.Read(make([]byte, 512)); err != nil {
		return err.Error()
	}
	return "answered"
}

func dialOutside(addr string) string {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "80"), 2*time.Second)
	if err != nil {
		return err.Error()
	}
	conn.Close()
	return "connected"
}
