// Command performance-svc serves the performance category standalone.
package main

import (
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() {
	server.Main(server.ServiceProgram("performance-svc", performancesvc.DefaultAddr, performancesvc.DefaultAdminAddr, func(d server.Deps) (server.Service, error) {
		return performancesvc.New(performancesvc.ConfigFromEnv(d))
	}))
}
