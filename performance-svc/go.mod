module github.com/defectshowcase/showcase/performance-svc

go 1.26.8

require github.com/defectshowcase/showcase/platform v0.0.0

require github.com/go-chi/chi/v5 v5.5.0 // indirect

replace github.com/defectshowcase/showcase/platform => ../platform
