// Package routes turns a service's route table into a chi router that follows
// the showcase's rules for everything around the handlers:
//
//   - unknown path (trailing slash and letter case included): 404 {"error": "Not Found"};
//   - known path, method it does not serve (standard or not): 405 {"error":
//     "Method Not Allowed"} with an Allow header;
//   - OPTIONS on a known path: 200 with Allow, no handler runs;
//   - HEAD on a GET route: the GET handler, body discarded by net/http;
//   - a panic in a handler: 500 {"success": false, "error": "<cause>"}, logged
//     once with its cause; the process keeps serving.
package routes

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/defectshowcase/showcase/platform/respond"
)

// Route is one row of a service's route table. Patterns are full, static
// paths such as "/performance/unbounded-result-set".
type Route struct {
	Method  string
	Pattern string
	Handler http.HandlerFunc
}

// Options tunes the router. The zero value is usable.
type Options struct {
	// Logger receives the cause of a recovered panic; nil discards it.
	Logger *slog.Logger
	// Middlewares run before routing, outermost first.
	Middlewares []func(http.Handler) http.Handler
}

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

// ServiceLogger is logger, or a discarding one when nil, tagged with the
// service's name.
func ServiceLogger(logger *slog.Logger, service string) *slog.Logger {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return logger.With(slog.String("service", service))
}

// New builds the router for table. It panics on a malformed table (duplicate
// or unsupported method), which is a programming error caught by every test.
func New(table []Route, opt Options) http.Handler {
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := chi.NewRouter()
	r.Use(opt.Middlewares...)
	r.Use(recoverJSON(logger))

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
	allow := make(map[string]string, len(methods))
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

// routingPath is the path chi matched against.
func routingPath(r *http.Request) string {
	if r.URL.RawPath != "" {
		return r.URL.RawPath
	}
	return r.URL.Path
}

// recoverJSON turns a panic into the showcase's 500 shape. It writes the
// cause to the log once, at error level, and never a stack trace to the client.
func recoverJSON(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
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
				logger.LogAttrs(r.Context(), slog.LevelError, "handler panic",
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					slog.String("cause", cause))
				respond.Fail(w, http.StatusInternalServerError, cause)
			}()
			next.ServeHTTP(w, r)
		})
	}
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
