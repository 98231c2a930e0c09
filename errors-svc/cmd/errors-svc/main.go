// Command errors-svc serves the internal-server-errors category standalone.
package main

import (
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() {
	server.Main(server.ServiceProgram("errors-svc", errorssvc.DefaultAddr, errorssvc.DefaultAdminAddr, func(d server.Deps) (server.Service, error) {
		return errorssvc.New(errorssvc.ConfigFromEnv(d))
	}))
}
