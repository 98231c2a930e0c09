module github.com/defectshowcase/showcase/conformance-svc

go 1.26.8

require github.com/defectshowcase/showcase/platform v0.1.0

require go.uber.org/automaxprocs v1.6.0 // indirect

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/defectshowcase/showcase v0.1.0
	github.com/go-chi/chi/v5 v5.5.0 // indirect
	github.com/go-chi/httplog/v2 v2.1.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/defectshowcase/showcase/platform => ../platform

replace github.com/defectshowcase/showcase => ..
