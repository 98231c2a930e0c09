// Command conformance-svc serves the response-conformance category standalone.
package main

import (
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() {
	server.Main(server.ServiceProgram("conformance-svc", conformancesvc.DefaultAddr, conformancesvc.DefaultAdminAddr, func(d server.Deps) (server.Service, error) {
		return conformancesvc.New(conformancesvc.ConfigFromEnv(d))
	}))
}
