module github.com/defectshowcase/showcase/platform

go 1.26.8

require github.com/go-chi/chi/v5 v5.5.0
