module github.com/defectshowcase/showcase/deploy

go 1.26.8

require github.com/defectshowcase/showcase/gateway v0.0.0

replace (
	github.com/defectshowcase/showcase/conformance-svc => ../conformance-svc
	github.com/defectshowcase/showcase/errors-svc => ../errors-svc
	github.com/defectshowcase/showcase/gateway => ../gateway
	github.com/defectshowcase/showcase/performance-svc => ../performance-svc
	github.com/defectshowcase/showcase/platform => ../platform
	github.com/defectshowcase/showcase/security-svc => ../security-svc
)
