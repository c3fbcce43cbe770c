# fuser: `make test` is what CI runs (.ci/run); it needs only Go and network
# access to Debian's archive for the NVRTC pieces (or a system CUDA).
GO ?= go
# Where scripts/cuda-sdk.sh fetches NVRTC and the CUDA headers when the
# machine has no CUDA of its own.
CUDA_DIR ?= .cache/cuda

.PHONY: test lint unit nvrtc gpu fuzz

test: lint unit nvrtc

lint:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test ./...

# The tests that need CUDA but no GPU: NVRTC compiles kernels (tag nvrtc), and
# the cuda-tagged runtime and generated Go packages are vetted and built
# against cuda.h. The exports of scripts/cuda-sdk.sh point cgo at the CUDA it
# finds or fetches.
nvrtc:
	@set -e; exports=$$(scripts/cuda-sdk.sh $(CUDA_DIR)); eval "$$exports"; \
	  echo "$$exports"; \
	  echo "$(GO) vet -tags nvrtc,cuda ./..."; $(GO) vet -tags nvrtc,cuda ./...; \
	  echo "$(GO) test -tags nvrtc ./..."; $(GO) test -tags nvrtc ./...

# Test binaries for the GPU machine, which has no Go: ship .gpu/ there and run
# .gpu/runtime.test -test.v. Not part of `make test`.
gpu:
	@set -e; exports=$$(scripts/cuda-sdk.sh $(CUDA_DIR)); eval "$$exports"; \
	  $(GO) test -c -tags cuda -o .gpu/runtime.test ./runtime

# A longer fuzzing run of the parser and checker (not part of `make test`).
fuzz:
	$(GO) test ./ir -run '^$$' -fuzz FuzzParse -fuzztime 10m -fuzzminimizetime 5s
