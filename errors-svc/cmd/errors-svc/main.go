// Command errors-svc serves the internal-server-errors category standalone.
package main

import (
	"log/slog"
	"net/http"

	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

var program = server.Program{
	Name:        "errors-svc",
	DefaultAddr: ":8082",
	Build: func(env *server.Env, logger *slog.Logger) (http.Handler, func() error, error) {
		svc, err := errorssvc.New(errorssvc.ConfigFromEnv(env, logger))
		if err != nil {
			return nil, nil, err
		}
		return svc.Handler(), svc.Close, nil
	},
}

func main() { server.Main(program) }
