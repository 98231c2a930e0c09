// Command conformance-svc serves the response-conformance category standalone.
package main

import (
	"log/slog"
	"net/http"

	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

var program = server.Program{
	Name:        "conformance-svc",
	DefaultAddr: ":8083",
	Build: func(env *server.Env, logger *slog.Logger) (http.Handler, func() error, error) {
		svc, err := conformancesvc.New(conformancesvc.ConfigFromEnv(env, logger))
		if err != nil {
			return nil, nil, err
		}
		return svc.Handler(), svc.Close, nil
	},
}

func main() { server.Main(program) }
