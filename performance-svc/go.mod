module github.com/defectshowcase/showcase/performance-svc

go 1.26.8

require github.com/defectshowcase/showcase/platform v0.0.0

replace github.com/defectshowcase/showcase/platform => ../platform
