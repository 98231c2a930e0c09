module github.com/defectshowcase/showcase/gateway

go 1.26.8

require (
	github.com/defectshowcase/showcase/conformance-svc v0.0.0
	github.com/defectshowcase/showcase/errors-svc v0.0.0
	github.com/defectshowcase/showcase/performance-svc v0.0.0
	github.com/defectshowcase/showcase/platform v0.0.0
	github.com/defectshowcase/showcase/security-svc v0.0.0
)

require (
	github.com/getkin/kin-openapi v0.152.0 // indirect
	github.com/go-openapi/jsonpointer v0.22.5 // indirect
	github.com/go-openapi/swag/jsonname v0.25.5 // indirect
	github.com/oasdiff/yaml v0.1.1 // indirect
	github.com/oasdiff/yaml3 v0.0.14 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/text v0.14.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/defectshowcase/showcase/conformance-svc => ../conformance-svc
	github.com/defectshowcase/showcase/errors-svc => ../errors-svc
	github.com/defectshowcase/showcase/performance-svc => ../performance-svc
	github.com/defectshowcase/showcase/platform => ../platform
	github.com/defectshowcase/showcase/security-svc => ../security-svc
)
