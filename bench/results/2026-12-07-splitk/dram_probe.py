"""dram_probe.py: under `ncu --profile-from-start off`, PyTorch kernels that
read tens of MB and write kilobytes, so that their DRAM write bytes can be set
beside our GEMVs' (issue #17: the fused GEMVs write ~2 MB against kilobytes of
outputs). Profiled: a bf16 sum over 117 MB (a reduction writing 2 bytes) and
cuBLAS's GEMV of Llama-3-8B's down projection (x[1,14336] · W[4096,14336]ᵀ,
117 MB read, 8 KB written)."""
import torch

x = torch.randn(14336, device="cuda", dtype=torch.bfloat16)
w = torch.randn(4096, 14336, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    w.sum()
    torch.nn.functional.linear(x[None], w)
torch.cuda.synchronize()
torch.cuda.profiler.start()
s = w.sum()
y = torch.nn.functional.linear(x[None], w)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print(float(s), float(y.float().abs().sum()))
