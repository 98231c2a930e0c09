// Command security-svc serves the security category standalone.
package main

import (
	"log/slog"
	"net/http"

	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

var program = server.Program{
	Name:        "security-svc",
	DefaultAddr: ":8081",
	Build: func(env *server.Env, logger *slog.Logger) (http.Handler, func() error, error) {
		svc, err := securitysvc.New(securitysvc.ConfigFromEnv(env, logger))
		if err != nil {
			return nil, nil, err
		}
		return svc.Handler(), svc.Close, nil
	},
}

func main() { server.Main(program) }
