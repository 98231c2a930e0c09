module github.com/defectshowcase/showcase/tools

go 1.26.8

require github.com/defectshowcase/showcase v0.0.0

replace github.com/defectshowcase/showcase => ../
