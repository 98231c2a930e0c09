// Package routes turns a service's route table into a chi router that follows
// the showcase's rules for everything around the handlers:
//
//   - unknown path (trailing slash and letter case included): 404 {"error": "Not Found"};
//   - known path, method it does not serve (standard or not): 405 {"error":
//     "Method Not Allowed"} with an Allow header;
//   - OPTIONS on a known path: 200 with Allow, no handler runs;
//   - HEAD on a GET route: the GET handler, body discarded by net/http;
//   - a panic in a handler: 500 {"success": false, "error": "<cause>"}, its
//     cause on the request's one log line; the process keeps serving.
//
// Every request is logged once and measured, labelled by its route pattern
// (the table's path for a 405, "unmatched" for an unknown path).
//
// A route that carries a planted defect names it and has two handlers, the
// planted variant and the conformant one; New picks one, once, and exports
// the choice as showcase_defect_active{defect}. The planted variant calls
// observe.Triggered where its defect shows, which counts the request in
// showcase_defect_triggered_total{defect} and the process's exposure log.
// The package knows no defect by name: the service's table does.
package routes

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/respond"
)

// Route is one row of a service's route table. Patterns are full, static
// paths such as "/a/b".
type Route struct {
	Method  string
	Pattern string
	// Handler serves a route without a planted defect.
	Handler http.HandlerFunc
	// Defect names the defect planted in the route (its DEFECT(<id>));
	// Planted serves it while it is active, Conformant once it is switched
	// off.
	Defect     string
	Planted    http.HandlerFunc
	Conformant http.HandlerFunc
}

// Unmatched is the route label of every request to an unknown path.
const Unmatched = "unmatched"

var (
	notFoundBody         = []byte(`{"error":"Not Found"}`)
	methodNotAllowedBody = []byte(`{"error":"Method Not Allowed"}`)
)

// NotFound answers the showcase's JSON 404.
func NotFound(w http.ResponseWriter, _ *http.Request) {
	respond.JSON(w, http.StatusNotFound, notFoundBody)
}

// MethodNotAllowed answers the showcase's JSON 405 with the given Allow value.
func MethodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header()["Allow"] = []string{allow}
	respond.JSON(w, http.StatusMethodNotAllowed, methodNotAllowedBody)
}

// Options200 answers an OPTIONS request: 200, Allow, empty body.
func Options200(w http.ResponseWriter, allow string) {
	h := w.Header()
	h["Allow"] = []string{allow}
	h["Content-Length"] = []string{"0"}
	w.WriteHeader(http.StatusOK)
}

// New builds the router for table, logged and measured by in (nil: a
// service named "unnamed" with discarded telemetry). active says which
// defects are active (nil: all of them). It panics on a malformed table
// (duplicate or unsupported method, a route with a defect but not both
// variants), which is a programming error caught by every test.
func New(table []Route, active func(defect string) bool, in *observe.Instruments) http.Handler {
	if in == nil {
		in = observe.Discard().Service("unnamed")
	}
	if active == nil {
		active = func(string) bool { return true }
	}
	table = slices.Clone(table)
	gauge := observe.DefectActive(in.Registerer)
	for i, rt := range table {
		if rt.Defect == "" {
			continue
		}
		if rt.Handler != nil || rt.Planted == nil || rt.Conformant == nil {
			panic("routes: " + rt.Pattern + " carries " + rt.Defect + ": it needs Planted and Conformant, and no Handler")
		}
		on := active(rt.Defect)
		planted := in.Planted(rt.Defect) // its counter at zero, even switched off
		table[i].Handler = rt.Conformant
		if on {
			table[i].Handler = func(w http.ResponseWriter, r *http.Request) {
				planted.Serve(w)
				rt.Planted(w, r)
			}
		}
		gauge.WithLabelValues(rt.Defect).Set(map[bool]float64{true: 1}[on])
	}
	r := chi.NewRouter()
	allow := map[string]string{}
	r.Use(in.Middleware(func(req *http.Request) string {
		if p := chi.RouteContext(req.Context()).RoutePattern(); p != "" {
			return p
		}
		if p := routingPath(req); allow[p] != "" {
			return p // a 405: the path is one of the table's
		}
		return Unmatched
	}))
	r.Use(recoverJSON, drainIgnoredBody)

	methods := map[string][]string{}
	for _, rt := range table {
		switch rt.Method {
		case http.MethodGet:
			r.Method(http.MethodGet, rt.Pattern, rt.Handler)
			r.Method(http.MethodHead, rt.Pattern, rt.Handler)
			methods[rt.Pattern] = append(methods[rt.Pattern], http.MethodGet, http.MethodHead)
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			r.Method(rt.Method, rt.Pattern, rt.Handler)
			methods[rt.Pattern] = append(methods[rt.Pattern], rt.Method)
		default:
			panic(fmt.Sprintf("routes: unsupported method %q for %s", rt.Method, rt.Pattern))
		}
	}
	for pattern, ms := range methods {
		ms = append(ms, http.MethodOptions)
		slices.Sort(ms)
		if len(slices.Compact(ms)) != len(ms) {
			panic("routes: duplicate method for " + pattern)
		}
		allow[pattern] = strings.Join(ms, ", ")
		a := allow[pattern]
		r.MethodFunc(http.MethodOptions, pattern, func(w http.ResponseWriter, _ *http.Request) {
			Options200(w, a)
		})
	}

	r.NotFound(NotFound)
	// chi calls this for a known path with another method, and also for any
	// method it does not know on any path; only the first is a 405.
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		if a, ok := allow[routingPath(req)]; ok {
			MethodNotAllowed(w, a)
			return
		}
		NotFound(w, req)
	})
	return r
}

// maxIgnoredBody bounds what drainIgnoredBody reads: the body limit of the
// endpoints that take one.
const maxIgnoredBody = 1 << 20

// drainIgnoredBody reads and drops the body of a GET or HEAD, which no
// handler reads, before the handler runs. net/http notices a client that
// leaves only once the request's body is read to its end; without this, a
// GET that carries a body would keep endpoint 9 or 10 working for a client
// long gone. A body beyond the bound, or one that cannot be read, is left
// as it is: the handler answers as it always does.
func drainIgnoredBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.ContentLength != 0 && r.Body != nil {
			_, _ = io.CopyN(io.Discard, r.Body, maxIgnoredBody)
		}
		next.ServeHTTP(w, r)
	})
}

// routingPath is the path chi matched against.
func routingPath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	return r.URL.Path
}

// recoverJSON turns a panic into the showcase's 500 shape. The cause goes
// on the request's log line (a 500, so at error level), never a stack trace
// to the client or the log.
func recoverJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's own signal to drop the connection
			}
			cause := panicText(v)
			observe.SetLogField(w, "panic", cause)
			respond.Fail(w, http.StatusInternalServerError, cause)
		}()
		next.ServeHTTP(w, r)
	})
}

func panicText(v any) string {
	switch v := v.(type) {
	case error:
		return v.Error()
	case string:
		return v
	default:
		return "internal error: " + strconv.Quote(fmt.Sprint(v))
	}
}

// Pattern is the route pattern a request matched (its table path), for a
// handler's own metrics; "" outside a router built by New.
func Pattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		return rc.RoutePattern()
	}
	return ""
}
