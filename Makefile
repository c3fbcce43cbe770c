# fuser: `make test` is what CI runs (.ci/run); it needs only Go and network
# access to Debian's archive for the NVRTC pieces.
GO ?= go

.PHONY: test lint unit fuzz

test: lint unit

lint:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test ./...

# A longer fuzzing run of the parser and checker (not part of `make test`).
fuzz:
	$(GO) test ./ir -run '^$$' -fuzz FuzzParse -fuzztime 10m -fuzzminimizetime 5s
