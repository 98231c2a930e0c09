// Command security-svc serves the security category standalone.
package main

import (
	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

func main() {
	server.Main(server.ServiceProgram("security-svc", ":8081", ":9091", func(d server.Deps) (server.Service, error) {
		return securitysvc.New(securitysvc.ConfigFromEnv(d))
	}))
}
