// Command gateway serves the whole showcase under one base URL: categories
// with an UPSTREAM_* URL are proxied, the others run in this process.
package main

import (
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/server"
)

func main() { server.Main(gateway.Program()) }
