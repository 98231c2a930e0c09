// Command performance-svc serves the performance category standalone.
package main

import (
	"log/slog"

	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() {
	server.Main(server.ServiceProgram("performance-svc", ":8084", func(env *server.Env, logger *slog.Logger) (server.Service, error) {
		return performancesvc.New(performancesvc.ConfigFromEnv(env, logger))
	}))
}
