// Command errors-svc serves the internal-server-errors category standalone.
package main

import (
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() { server.Main(errorssvc.Program()) }
