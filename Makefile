# fuser: `make test` is what CI runs (.ci/run); it needs only Go and network
# access to Debian's archive for the NVRTC pieces (or a system CUDA).
GO ?= go
# Where scripts/cuda-sdk.sh fetches NVRTC and the CUDA headers when the
# machine has no CUDA of its own.
CUDA_DIR ?= .cache/cuda

.PHONY: test lint unit nvrtc gpu gpu-bundle gpu-base gpu-attn-bundle fuzz

# The nvrtc target's tests are a superset of unit's: every package's tests
# with the tag nvrtc, and codegen/nvrtc's without it (the stub's).
test: lint nvrtc

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
	  echo "$(GO) test -tags nvrtc -timeout 25m ./..."; $(GO) test -tags nvrtc -timeout 25m ./...; \
	  echo "$(GO) test ./codegen/nvrtc"; $(GO) test ./codegen/nvrtc

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
# cubins, reused while their source is unchanged); .gpu/layerstep (the
# bench targets timed through their generated packages); .gpu/laddercheck
# (the CUDA-graph ladder checked through the generated packages of
# gpu/laddercheck's targets, which embed their PTX); .gpu/refdump (the
# external-reference check's device side, gpu/cmd/refdump); run.sh, ab.sh,
# ncu.sh, refcheck.sh, bench.env, compare.py, ncu_table.py, ncu_stalls.py,
# refcheck.py and reference/ (bench/reference). There: .gpu/run.sh
# RESULTS_DIR, .gpu/ab.sh OUT for an A/B round against make gpu-base,
# .gpu/ncu.sh OUT NAME:REGEX:DIMS... for Nsight Compute over single kernels
# of the step, or .gpu/refcheck.sh OUT for ours against float64 within twice
# PyTorch's own error. Not part of `make test`.
# The regression specs of internal/specgen/testdata and GEN_SPECS specs from
# internal/specgen (seeds 0..GEN_SPECS-1, each checked on the CPU first)
# join the suite: written to .gpu/genspecs, their kernels compiled with the
# others, run by run.sh through gpu.test -specs; GEN_SPECS=0 leaves the
# generated ones out.
GEN_SPECS ?= 32
# GPU_SUITE=false compiles only the bench targets' kernels (a benchmarking
# round's quick bundle; the suite's images already there are kept).
GPU_SUITE ?= true
# GPU_CASES (a regexp) compiles only the suite cases it matches, as the
# suite's -cases runs them (the determinism test's kernels always): a round
# that checks a few kernels on the device.
GPU_CASES ?=
BENCH_SPEC ?= llama3_8b
BENCH_DIMS ?= B=1,S=1,T=4096 B=16,S=1,T=4096 B=64,S=1,T=4096
CUDA_LDFLAGS := -ldflags='-s -w'
gpu-bundle:
	@set -e; exports=$$(scripts/cuda-sdk.sh $(CUDA_DIR)); eval "$$exports"; \
	  mkdir -p .gpu; \
	  echo "building .gpu/runtime.test .gpu/gpu.test .gpu/fuser .gpu/refdump (tag cuda), then the kernels, .gpu/layerstep and .gpu/laddercheck"; \
	  $(GO) test -c -tags cuda $(CUDA_LDFLAGS) -o .gpu/runtime.test ./runtime; \
	  $(GO) test -c -tags cuda $(CUDA_LDFLAGS) -o .gpu/gpu.test ./gpu; \
	  $(GO) build -tags cuda $(CUDA_LDFLAGS) -o .gpu/fuser ./cmd/fuser; \
	  $(GO) build -tags cuda $(CUDA_LDFLAGS) -o .gpu/refdump ./gpu/cmd/refdump; \
	  for f in .gpu/runtime.test .gpu/gpu.test .gpu/fuser .gpu/refdump; do \
	    if readelf -d $$f | grep -qi nvrtc; then echo "$$f links NVRTC, which the GPU machine lacks"; exit 1; fi; \
	  done; \
	  bench=""; for d in $(BENCH_DIMS); do bench="$${bench}$(BENCH_SPEC):$$d;"; done; \
	  rm -rf .gpu/genspecs; mkdir -p .gpu/genspecs; cp internal/specgen/testdata/*.fu .gpu/genspecs/; \
	  if [ "$(GEN_SPECS)" != 0 ]; then $(GO) run ./internal/specgen/cmd/specgen -out .gpu/genspecs -n $(GEN_SPECS); fi; \
	  gen="-specs .gpu/genspecs"; \
	  $(GO) run -tags nvrtc ./gpu/cmd/gpukernels -out .gpu/kernels -bench "$$bench" -suite=$(GPU_SUITE) -cases '$(GPU_CASES)' $$gen; \
	  $(GO) run -tags nvrtc ./gpu/cmd/layerstep -out _layerstep -bench "$$bench"; \
	  $(GO) build -tags cuda $(CUDA_LDFLAGS) -o .gpu/layerstep ./_layerstep; \
	  $(GO) run -tags nvrtc ./gpu/cmd/laddercheck -out _laddercheck; \
	  $(GO) build -tags cuda $(CUDA_LDFLAGS) -o .gpu/laddercheck ./_laddercheck; \
	  for f in .gpu/layerstep .gpu/laddercheck; do \
	    if readelf -d $$f | grep -qi nvrtc; then echo "$$f links NVRTC, which the GPU machine lacks"; exit 1; fi; \
	  done; \
	  printf 'BENCH_SPEC=%s\nBENCH_DIMS="%s"\n' '$(BENCH_SPEC)' '$(BENCH_DIMS)' > .gpu/bench.env; \
	  cp gpu/run.sh gpu/ab.sh gpu/ncu.sh gpu/refcheck.sh .gpu/; cp bench/compare.py bench/ncu_table.py bench/ncu_stalls.py bench/refcheck.py .gpu/; \
	  rm -rf .gpu/reference; cp -r bench/reference .gpu/reference; chmod +x .gpu/run.sh .gpu/ab.sh .gpu/ncu.sh .gpu/refcheck.sh; \
	  du -sh .gpu; echo "ship .gpu/ to the GPU machine and run .gpu/run.sh RESULTS_DIR there"

# The other side of an A/B round: the fuser CLI (tag cuda) of revision BASE
# and the kernels of its bench targets (BENCH_SPEC at BENCH_DIMS), built in
# a temporary worktree into .gpu/base, beside the bundle of this tree (run
# make gpu-bundle too). run.sh then times BASE's fused step in the same
# call (its bench_base step), and ab.sh alternates the two. Not part of
# `make test`.
BASE ?= HEAD~1
gpu-base:
	@set -e; exports=$$(scripts/cuda-sdk.sh $(CUDA_DIR)); eval "$$exports"; \
	  root=$$(pwd); wt=$$(mktemp -d); git worktree add --detach "$$wt" $(BASE) >/dev/null; \
	  trap 'git worktree remove --force "$$wt"' EXIT; \
	  rm -rf .gpu/base; mkdir -p .gpu/base; git rev-parse $(BASE) > .gpu/base/REVISION; \
	  bench=""; for d in $(BENCH_DIMS); do bench="$${bench}$(BENCH_SPEC):$$d;"; done; \
	  cd "$$wt"; \
	  $(GO) build -tags cuda $(CUDA_LDFLAGS) -o "$$root/.gpu/base/fuser" ./cmd/fuser; \
	  $(GO) run -tags nvrtc ./gpu/cmd/gpukernels -out "$$root/.gpu/base/kernels" -bench "$$bench" -suite=false; \
	  echo "built .gpu/base at $$(cat $$root/.gpu/base/REVISION)"

# The decode attention benchmark (bench/decode_attention.sh runs it there):
# fuser and gpu.test (tag cuda), the kernels of the bench shapes (also at the
# split sizes of ATTN_SPLITS) and of the suite, bench/specs and compare.py,
# into ATTN_DIR. Not part of `make test`.
ATTN_DIR ?= .gpu-attn
ATTN_SPLITS ?= 0,256,1024
ATTN_SHAPES := B=1,S=1,T=4095 B=1,S=1,T=32767 B=1,S=1,T=131071 B=16,S=1,T=8191 B=64,S=1,T=4095
gpu-attn-bundle:
	@set -e; exports=$$(scripts/cuda-sdk.sh $(CUDA_DIR)); eval "$$exports"; \
	  mkdir -p $(ATTN_DIR)/specs; cp bench/specs/*.fu bench/compare.py $(ATTN_DIR)/; mv $(ATTN_DIR)/*.fu $(ATTN_DIR)/specs/; \
	  $(GO) test -c -tags cuda $(CUDA_LDFLAGS) -o $(ATTN_DIR)/gpu.test ./gpu; \
	  $(GO) build -tags cuda $(CUDA_LDFLAGS) -o $(ATTN_DIR)/fuser ./cmd/fuser; \
	  for f in $(ATTN_DIR)/gpu.test $(ATTN_DIR)/fuser; do \
	    if readelf -d $$f | grep -qi nvrtc; then echo "$$f links NVRTC, which the GPU machine lacks"; exit 1; fi; \
	  done; \
	  d=$$(cd $(ATTN_DIR)/specs && pwd); bench=""; \
	  for s in $(ATTN_SHAPES); do bench="$${bench}$$d/decode_attention.fu:$$s;$$d/decode_attention_paged.fu:$$s;"; done; \
	  bench="$${bench}$$d/decode_attention.fu:B=64,S=1,T=8703;$$d/decode_cascade.fu:B=64,S=1,T=511,L=8192"; \
	  $(GO) run -tags nvrtc ./gpu/cmd/gpukernels -out $(ATTN_DIR)/kernels -bench "$$bench" -split-keys $(ATTN_SPLITS); \
	  du -sh $(ATTN_DIR); echo "there, from the repository root: bench/decode_attention.sh $(ATTN_DIR) RESULTS_DIR"

# A longer fuzzing run of the parser and checker, of the checker's
# arithmetic, and of the compiler against the interpreter on generated specs
# (internal/specgen; not part of `make test`).
fuzz:
	$(GO) test ./internal/specgen -run '^$$' -fuzz FuzzSpec -fuzztime 10m -fuzzminimizetime 30s
	$(GO) test ./frontend -run '^$$' -fuzz FuzzParse -fuzztime 10m -fuzzminimizetime 5s
	$(GO) test ./frontend -run '^$$' -fuzz FuzzArithmetic -fuzztime 5m -fuzzminimizetime 5s
