// Command conformance-svc serves the response-conformance category standalone.
package main

import (
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() { server.Main(conformancesvc.Program()) }
