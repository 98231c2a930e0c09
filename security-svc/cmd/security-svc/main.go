// Command security-svc serves the security category standalone.
package main

import (
	"log/slog"

	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

func main() {
	server.Main(server.ServiceProgram("security-svc", ":8081", func(env *server.Env, logger *slog.Logger) (server.Service, error) {
		return securitysvc.New(securitysvc.ConfigFromEnv(env, logger))
	}))
}
