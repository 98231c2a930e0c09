// Command gateway serves the whole showcase under one base URL: categories
// with an UPSTREAM_* URL are proxied, the others run in this process.
package main

import (
	"log/slog"
	"net/http"

	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/server"
)

var program = server.Program{
	Name:        "gateway",
	DefaultAddr: ":8080",
	Build: func(env *server.Env, logger *slog.Logger) (http.Handler, func() error, error) {
		g, closeFn, err := gateway.Assemble(env, logger)
		if err != nil {
			return nil, nil, err
		}
		return g, closeFn, nil
	},
}

func main() { server.Main(program) }
