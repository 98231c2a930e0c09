module github.com/defectshowcase/showcase/gateway

go 1.26.8

require (
	github.com/defectshowcase/showcase/conformance-svc v0.1.0
	github.com/defectshowcase/showcase/errors-svc v0.1.0
	github.com/defectshowcase/showcase/judge v0.1.0
	github.com/defectshowcase/showcase/performance-svc v0.1.0
	github.com/defectshowcase/showcase/platform v0.1.0
	github.com/defectshowcase/showcase/security-svc v0.1.0
	github.com/getkin/kin-openapi v0.152.0
	github.com/prometheus/client_golang v1.25.0
	github.com/rbretecher/go-postman-collection v0.9.0
	github.com/swaggest/swgui v1.8.5
)

require (
	github.com/owenrumney/go-sarif/v3 v3.3.1 // indirect
	github.com/xeipuuv/gojsonpointer v0.0.0-20180127040702-4e3ac2762d5f // indirect
	github.com/xeipuuv/gojsonreference v0.0.0-20180127040603-bd5ef7bd5415 // indirect
	github.com/xeipuuv/gojsonschema v1.2.0 // indirect
	go.uber.org/automaxprocs v1.6.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/defectshowcase/showcase v0.1.0
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/go-chi/chi/v5 v5.5.0 // indirect
	github.com/go-chi/httplog/v2 v2.1.1 // indirect
	github.com/go-openapi/jsonpointer v1.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/oasdiff/yaml v0.1.1 // indirect
	github.com/oasdiff/yaml3 v0.0.14 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.61.1 // indirect
)

replace github.com/defectshowcase/showcase/conformance-svc => ../conformance-svc

replace github.com/defectshowcase/showcase/errors-svc => ../errors-svc

replace github.com/defectshowcase/showcase/judge => ../judge

replace github.com/defectshowcase/showcase/performance-svc => ../performance-svc

replace github.com/defectshowcase/showcase/platform => ../platform

replace github.com/defectshowcase/showcase/security-svc => ../security-svc

replace github.com/defectshowcase/showcase => ..
