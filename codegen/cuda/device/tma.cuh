/*
 * The Hopper tensor copy engine's generic pieces (sm_90a), which the decode
 * attention (attention_bulk.cuh), the wgmma prefill attention
 * (attention_wg.cuh) and the wgmma GEMM (gemm_wgmma.cuh) use: the
 * architecture test, tensor maps, the 2D tile copy and the mbarriers its
 * copies complete on.
 *
 * The decode attention's map is encoded by the host and passed by value
 * (fz_tmap, codegen.RowMap), so that no launch spends time building it. The
 * GEMM and the prefill attention build theirs in the kernel: a warp zeroes
 * 128 bytes of shared memory, sets every field with tensormap.replace and
 * copies the result to a global slot with the release to the tensor-map
 * proxy; the threads that copy through the map acquire it first. A copy
 * reads the map from global memory, hence the slot; slots are per SM, so
 * that only blocks resident on one SM can share one.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
// ---- the tensor copy engine (device/tma.cuh) ----
// FZ_TMA: whether the target has the engine and tensormap.replace (sm_90a);
// elsewhere the functions below are empty and no kernel calls them.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FZ_TMA 1
#else
#define FZ_TMA 0
#endif
// FZ_TMA_STRIDE(b) is a global stride of b bytes as tensormap.replace takes
// it: CUDA 13's ptxas takes bytes, 12.4's (the NVRTC fuser builds with)
// writes the value into the map's field unshifted, and the field holds
// bytes / 16 (seen on the H200 against cuTensorMapEncodeTiled).
#if __CUDACC_VER_MAJOR__ < 13
#define FZ_TMA_STRIDE(b) ((b) >> 4)
#else
#define FZ_TMA_STRIDE(b) (b)
#endif
// FZ_TMA_SLOTS bounds the SM ids (%smid) that get a global map slot.
#define FZ_TMA_SLOTS 256
// fz_smid is the SM the calling thread runs on.
FZ_DEV u32 fz_smid() {
  u32 s;
  asm("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
// fz_tmap is a tensor map the host encodes (cuTensorMapEncodeTiled), a
// kernel parameter passed by value as const __grid_constant__, so that its
// address is the parameter's own, in the constant bank.
struct __align__(64) fz_tmap {
  u64 w[16];
};
// fz_tmap_prefetch asks for the map at g (a parameter's address) ahead of
// its first copy.
FZ_DEV void fz_tmap_prefetch(const fz_tmap* g) {
#if FZ_TMA
  asm volatile("prefetch.tensormap [%0];" :: "l"((u64)g) : "memory");
#endif
}
// fz_tmap_acquire makes the map at g visible to the calling thread's copies.
FZ_DEV void fz_tmap_acquire(const u64* g) {
#if FZ_TMA
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(g) : "memory");
#endif
}
// fz_tmap_publish copies the map built in shared memory sm to global slot g
// with the release to the tensor-map proxy. All 32 lanes of a warp call it.
FZ_DEV void fz_tmap_publish(u64* g, const u64* sm) {
#if FZ_TMA
  asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
               :: "l"(g), "r"(fz_smem_addr(sm)) : "memory");
#endif
}
// fz_tmap2d_build builds in sm (16 words, 128-byte aligned) and publishes
// to slot g the map of a 2D tensor of 16-bit elements at base: d0
// contiguous elements a row (dim 0), d1 rows s1 bytes apart, boxes of b0 by
// b1 elements landing in swizzle mode SWZ (0 none, 2 the 64-byte swizzle:
// chunk c of a box row r of 64 bytes lands at chunk c ^ (r / 2 % 4); 3 the
// 128-byte swizzle: 16-byte chunk c of a box row r of 128 bytes lands at
// chunk c ^ (r % 8)).
// All 32 lanes of one warp call it.
template <int SWZ> FZ_DEV void fz_tmap2d_build(u64* sm, u64* g, const void* base, u32 d0, u32 d1, u64 s1, u32 b0, u32 b1) {
  ((u32*)sm)[threadIdx.x & 31] = 0u;
  __syncwarp();
#if FZ_TMA
  if ((threadIdx.x & 31) == 0) {
    asm volatile(
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;\n\t"
        "tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;\n\t"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %2;\n\t"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %3;\n\t"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %4;\n\t"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %5;\n\t"
        "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %6;\n\t"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;\n\t"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;\n\t"
        "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 1;\n\t"
        "tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;\n\t"
        "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], %7;\n\t"
        "tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;"
        :: "r"(fz_smem_addr(sm)), "l"((u64)base), "r"(b0), "r"(b1), "r"(d0), "r"(d1), "l"((u64)FZ_TMA_STRIDE(s1)), "n"(SWZ) : "memory");
  }
  __syncwarp();
  fz_tmap_publish(g, sm);
#endif
}
// fz_tma2d copies the box at element coordinates {x, y} of map g to shared
// address dst, completing on the mbarrier at b; elements outside the
// tensor land as zeros.
FZ_DEV void fz_tma2d(u32 dst, const u64* g, int x, int y, u32 b) {
#if FZ_TMA
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"(g), "r"(x), "r"(y), "r"(b) : "memory");
#endif
}
// fz_mbar_init initialises the mbarrier at b for n arrivals a phase (and
// fences the initialisation).
FZ_DEV void fz_mbar_init(u32 b, u32 n) {
#if FZ_TMA
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n\tfence.mbarrier_init.release.cluster;" :: "r"(b), "r"(n) : "memory");
#endif
}
// fz_mbar_expect arrives on the mbarrier at b, expecting bytes more of
// copies to complete on it this phase.
FZ_DEV void fz_mbar_expect(u32 b, u32 bytes) {
#if FZ_TMA
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
#endif
}
// fz_mbar_arrive arrives on the mbarrier at b.
FZ_DEV void fz_mbar_arrive(u32 b) {
#if FZ_TMA
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "r"(b) : "memory");
#endif
}
// fz_mbar_wait waits for the phase of parity ph of the mbarrier at b.
FZ_DEV void fz_mbar_wait(u32 b, u32 ph) {
#if FZ_TMA
  asm volatile("{\n\t.reg .pred p;\n\tW: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n\t@!p bra W;\n\t}" :: "r"(b), "r"(ph) : "memory");
#endif
}
