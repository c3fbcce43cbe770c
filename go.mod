module github.com/fuser-dev/fuser

go 1.26.8

require github.com/alecthomas/participle/v2 v2.1.4

require github.com/alecthomas/repr v0.5.2 // indirect
