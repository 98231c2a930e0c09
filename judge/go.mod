module github.com/defectshowcase/showcase/judge

go 1.26.8

require (
	github.com/defectshowcase/showcase v0.0.0
	github.com/defectshowcase/showcase/platform v0.0.0
	github.com/owenrumney/go-sarif/v3 v3.3.1
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/go-chi/chi/v5 v5.5.0 // indirect
	github.com/go-chi/httplog/v2 v2.1.1 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/rbretecher/go-postman-collection v0.9.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/swaggest/swgui v1.8.5 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.61.1 // indirect
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794
	github.com/defectshowcase/showcase/conformance-svc v0.0.0 // indirect
	github.com/defectshowcase/showcase/errors-svc v0.0.0 // indirect
	github.com/defectshowcase/showcase/gateway v0.0.0
	github.com/defectshowcase/showcase/performance-svc v0.0.0 // indirect
	github.com/defectshowcase/showcase/security-svc v0.0.0 // indirect
	github.com/xeipuuv/gojsonpointer v0.0.0-20180127040702-4e3ac2762d5f // indirect
	github.com/xeipuuv/gojsonreference v0.0.0-20180127040603-bd5ef7bd5415 // indirect
	github.com/xeipuuv/gojsonschema v1.2.0 // indirect
)

replace github.com/defectshowcase/showcase => ../

replace github.com/defectshowcase/showcase/platform => ../platform

replace github.com/defectshowcase/showcase/gateway => ../gateway

replace github.com/defectshowcase/showcase/security-svc => ../security-svc

replace github.com/defectshowcase/showcase/errors-svc => ../errors-svc

replace github.com/defectshowcase/showcase/conformance-svc => ../conformance-svc

replace github.com/defectshowcase/showcase/performance-svc => ../performance-svc
