package gateway_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/gateway"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
	"github.com/defectshowcase/showcase/suite"
)

// rawModes are the one process and the gateway in front of the four
// services, each on a real listener, started once per fuzzing process;
// endpoint 9's items cost a microsecond so that the fuzzer is not slowed.
var rawModes = sync.OnceValue(func() [2]string {
	listen := func(h http.Handler) string {
		ts := httptest.NewUnstartedServer(h)
		ts.Config.MaxHeaderBytes = server.DefaultLimits.MaxHeaderBytes
		// An incomplete request ends after a quarter of a second, in both
		// modes alike, so that the fuzzer does not wait on each.
		ts.Config.ReadHeaderTimeout = 250 * time.Millisecond
		ts.Config.ReadTimeout = 250 * time.Millisecond
		ts.Start()
		return ts.Listener.Addr().String()
	}
	build := func(env map[string]string) http.Handler {
		built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, observe.Discard())
		if err != nil {
			panic(err)
		}
		return built.Handler
	}
	one := listen(build(map[string]string{"ITEM_COST": "1us", "SQLITE_MAX_ROWS": "1000"}))
	must := func(s interface{ Handler() http.Handler }, err error) http.Handler {
		if err != nil {
			panic(err)
		}
		return s.Handler()
	}
	all := catalogue.All()
	env := map[string]string{
		"UPSTREAM_SECURITY":    "http://" + listen(must(securitysvc.New(securitysvc.Config{Defects: all}))),
		"UPSTREAM_ERRORS":      "http://" + listen(must(errorssvc.New(errorssvc.Config{Defects: all, MaxRows: 1000}))),
		"UPSTREAM_CONFORMANCE": "http://" + listen(must(conformancesvc.New(conformancesvc.Config{Defects: all}))),
		"UPSTREAM_PERFORMANCE": "http://" + listen(must(performancesvc.New(performancesvc.Config{Defects: all, ItemCost: time.Microsecond, FibQueue: performancesvc.DefaultFibQueue}))),
	}
	return [2]string{one, listen(build(env))}
})

// rawAnswerOf writes raw on a new connection and reads the first answer: its status, content type and the shape of its
// body (its JSON keys and their types, or the text), or "no answer".
func rawAnswerOf(addr string, raw []byte) string {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer conn.Close()
	// Not closing the sending side: net/http takes that for a client that
	// has left, and whether a fast answer beats that news is timing, in
	// the one process as behind the gateway.
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second)) // endpoint 10 takes 1.2 s at most
	_, _ = conn.Write(raw)
	// The answer to a HEAD has no body, whatever its Content-Length says.
	method, _, _ := bytes.Cut(raw, []byte(" "))
	res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: string(method)})
	if err != nil {
		return "no answer"
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return fmt.Sprintf("%d %s %s", res.StatusCode, res.Header.Get("Content-Type"), suite.Shape(body))
}

// FuzzRawHTTPModes sends raw, malformed HTTP/1.1 (framing, headers,
// bodies) to the one process and to the gateway in front of the four
// services: both must give the same first answer (status, content type,
// body shape), and the gateway in front of healthy services never a 502 or
// 504 of its own.
func FuzzRawHTTPModes(f *testing.F) {
	seeds := []string{
		"GET " + suite.PathMissingField + " HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET " + suite.PathMissingField + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
		"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nd\r\n{\"text\":\"ok\"}\r\n0\r\n\r\n",
		"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"text\":\"a",
		"POST " + suite.PathInputTypeHandling + " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n{\"number\":\"4111-1111\"}",
		"POST " + suite.PathUnicodeEncoding + " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}",
		"GET " + suite.PathUndocumentedStatus + "?id=1 HTTP/1.1\r\nHost: h\r\nX-Request-Id: a\r\nConnection: X-Request-Id\r\n\r\n",
		"GET " + suite.PathUnauthenticatedAccess + " HTTP/1.0\r\n\r\n",
		"GET /security/../performance/unbounded-result-set?limit=3 HTTP/1.1\r\nHost: h\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n",
		"GET " + suite.PathUnboundedResultSet + "?limit=2 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello",
		"POST " + suite.PathColumnSize + " HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 13\r\n\r\n{\"text\":\"ok\"}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		modes := rawModes()
		one, split := rawAnswerOf(modes[0], raw), rawAnswerOf(modes[1], raw)
		if one != split {
			t.Fatalf("%q:\n one process %s\n split       %s", raw, one, split)
		}
		if strings.HasPrefix(split, "502 ") || strings.HasPrefix(split, "504 ") {
			t.Fatalf("%q: the gateway answered %s in front of healthy services", raw, split)
		}
	})
}
