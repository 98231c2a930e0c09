module github.com/defectshowcase/showcase/judge

go 1.26.8

require (
	github.com/defectshowcase/showcase v0.0.0
	github.com/defectshowcase/showcase/platform v0.0.0
	github.com/owenrumney/go-sarif/v3 v3.3.1
)

require (
	github.com/xeipuuv/gojsonpointer v0.0.0-20180127040702-4e3ac2762d5f // indirect
	github.com/xeipuuv/gojsonreference v0.0.0-20180127040603-bd5ef7bd5415 // indirect
	github.com/xeipuuv/gojsonschema v1.2.0 // indirect
)

replace github.com/defectshowcase/showcase => ../

replace github.com/defectshowcase/showcase/platform => ../platform
