// Command performance-svc serves the performance category standalone.
package main

import (
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() { server.Main(performancesvc.Program()) }
