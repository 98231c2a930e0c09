// Command security-svc serves the security category standalone.
package main

import (
	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

func main() { server.Main(securitysvc.Program()) }
