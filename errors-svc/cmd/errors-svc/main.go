// Command errors-svc serves the internal-server-errors category standalone.
package main

import (
	"log/slog"

	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() {
	server.Main(server.ServiceProgram("errors-svc", ":8082", func(env *server.Env, logger *slog.Logger) (server.Service, error) {
		return errorssvc.New(errorssvc.ConfigFromEnv(env, logger))
	}))
}
