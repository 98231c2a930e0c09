module github.com/defectshowcase/showcase/gateway

go 1.26.8

require (
	github.com/defectshowcase/showcase/conformance-svc v0.0.0
	github.com/defectshowcase/showcase/errors-svc v0.0.0
	github.com/defectshowcase/showcase/performance-svc v0.0.0
	github.com/defectshowcase/showcase/platform v0.0.0
	github.com/defectshowcase/showcase/security-svc v0.0.0
)

require gopkg.in/yaml.v3 v3.0.1 // indirect

replace (
	github.com/defectshowcase/showcase/conformance-svc => ../conformance-svc
	github.com/defectshowcase/showcase/errors-svc => ../errors-svc
	github.com/defectshowcase/showcase/performance-svc => ../performance-svc
	github.com/defectshowcase/showcase/platform => ../platform
	github.com/defectshowcase/showcase/security-svc => ../security-svc
)
