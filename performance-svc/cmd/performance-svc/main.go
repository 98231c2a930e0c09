// Command performance-svc serves the performance category standalone.
package main

import (
	"log/slog"
	"net/http"

	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

var program = server.Program{
	Name:        "performance-svc",
	DefaultAddr: ":8084",
	Build: func(env *server.Env, logger *slog.Logger) (http.Handler, func() error, error) {
		svc, err := performancesvc.New(performancesvc.ConfigFromEnv(env, logger))
		if err != nil {
			return nil, nil, err
		}
		return svc.Handler(), svc.Close, nil
	},
}

func main() { server.Main(program) }
