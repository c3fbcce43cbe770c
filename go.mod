module github.com/fuser-dev/fuser

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/dave/jennifer v1.7.1
	github.com/google/go-cmp v0.7.0
	gorgonia.org/cu v0.9.6
)

require (
	github.com/alecthomas/repr v0.5.2 // indirect
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
)
