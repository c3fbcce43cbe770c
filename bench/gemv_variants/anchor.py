"""cuBLAS (torch F.linear) on the GEMV shapes of gemv.cu, timed the way timing.cuh times (events per launch,
weights rotated over copies spanning far past L2); prints one line per shape."""
import torch
import torch.nn.functional as F

def main():
    for m in (1, 16):
        for k, n in ((4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096)):
            wbytes = k * n * 2
            copies = max(2, (1400 << 20) // wbytes)
            ws = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            for r in range(5):
                F.linear(x, ws[r % copies])
            torch.cuda.synchronize()
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(50)]
            torch.cuda._sleep(50_000_000)
            for r, (a, b) in enumerate(ev):
                a.record(); F.linear(x, ws[r % copies]); b.record()
            torch.cuda.synchronize()
            ts = sorted(a.elapsed_time(b) * 1e3 for a, b in ev)
            us = ts[len(ts) // 2]
            print(f"cublas M{m:<3d} K{k:<6d} N{n:<6d} {us:8.2f} us {wbytes / us / 1e6:6.3f} TB/s")
            del ws

main()
