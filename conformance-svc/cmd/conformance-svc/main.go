// Command conformance-svc serves the response-conformance category standalone.
package main

import (
	"log/slog"

	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() {
	server.Main(server.ServiceProgram("conformance-svc", ":8083", func(env *server.Env, logger *slog.Logger) (server.Service, error) {
		return conformancesvc.New(conformancesvc.ConfigFromEnv(env, logger))
	}))
}
