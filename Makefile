# fuser: `make test` is what CI runs (.ci/run); it needs only Go and network
# access to Debian's archive for the NVRTC pieces (or a system CUDA).
GO ?= go
# Where scripts/cuda-sdk.sh fetches NVRTC and the CUDA headers when the
# machine has no CUDA of its own.
CUDA_DIR ?= .cache/cuda

.PHONY: test lint unit nvrtc gpu gpu-bundle fuzz

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
	  echo "$(GO) test -tags nvrtc -timeout 60m ./..."; $(GO) test -tags nvrtc -timeout 60m ./...

# Test binaries for the GPU machine, which has no Go: ship .gpu/ there and run
# .gpu/runtime.test -test.v. Not part of `make test`.
gpu:
	@set -e; exports=$$(scripts/cuda-sdk.sh $(CUDA_DIR)); eval "$$exports"; \
	  $(GO) test -c -tags cuda -o .gpu/runtime.test ./runtime

# Everything the GPU machine runs, into .gpu/ (git-ignored), since it has no Go
# and no NVRTC 12: the test binaries of runtime and of the on-device suite
# (gpu), the fuser CLI with `fuser bench`, all built with the tag cuda and
# linking libcuda only (checked below); the kernels of every suite case and
# bench target compiled here with NVRTC into .gpu/kernels (gzipped sm_90a
# cubins, reused while their source is unchanged); run.sh, bench.env,
# compare.py and ncu_table.py. There: .gpu/run.sh RESULTS_DIR. Not part of `make test`.
BENCH_SPEC ?= llama3_8b
BENCH_DIMS ?= B=1,S=1,T=4096 B=16,S=1,T=4096
CUDA_LDFLAGS := -ldflags='-s -w'
gpu-bundle:
	@set -e; exports=$$(scripts/cuda-sdk.sh $(CUDA_DIR)); eval "$$exports"; \
	  mkdir -p .gpu; \
	  echo "building .gpu/runtime.test .gpu/gpu.test .gpu/fuser (tag cuda)"; \
	  $(GO) test -c -tags cuda $(CUDA_LDFLAGS) -o .gpu/runtime.test ./runtime; \
	  $(GO) test -c -tags cuda $(CUDA_LDFLAGS) -o .gpu/gpu.test ./gpu; \
	  $(GO) build -tags cuda $(CUDA_LDFLAGS) -o .gpu/fuser ./cmd/fuser; \
	  for f in .gpu/runtime.test .gpu/gpu.test .gpu/fuser; do \
	    if readelf -d $$f | grep -qi nvrtc; then echo "$$f links NVRTC, which the GPU machine lacks"; exit 1; fi; \
	  done; \
	  bench=""; for d in $(BENCH_DIMS); do bench="$${bench}$(BENCH_SPEC):$$d;"; done; \
	  $(GO) run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -bench "$$bench"; \
	  printf 'BENCH_SPEC=%s\nBENCH_DIMS="%s"\n' '$(BENCH_SPEC)' '$(BENCH_DIMS)' > .gpu/bench.env; \
	  cp gpu/run.sh .gpu/run.sh; cp bench/compare.py bench/ncu_table.py .gpu/; chmod +x .gpu/run.sh; \
	  du -sh .gpu; echo "ship .gpu/ to the GPU machine and run .gpu/run.sh RESULTS_DIR there"

# A longer fuzzing run of the parser and checker (not part of `make test`).
fuzz:
	$(GO) test ./ir -run '^$$' -fuzz FuzzParse -fuzztime 10m -fuzzminimizetime 5s
