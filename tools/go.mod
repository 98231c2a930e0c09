module github.com/defectshowcase/showcase/tools

go 1.26.8

require github.com/defectshowcase/showcase v0.0.0

require gopkg.in/yaml.v3 v3.0.1 // indirect

replace github.com/defectshowcase/showcase => ../
