/*
 * The Hopper tensor copy engine as the decode attention uses it (sm_90a): a
 * tensor map built on the device, mbarriers, the tile copy and the 128-byte
 * swizzle it writes shared memory in. Emitted before attention_flash.cuh,
 * whose decode template uses it.
 *
 * The map is built by the kernel itself rather than encoded by the host
 * (cuTensorMapEncodeTiled): the kernel ABI stays device pointers and dims,
 * and the map always describes the buffers of this launch. A warp zeroes
 * 128 bytes of shared memory, sets every field with tensormap.replace and
 * copies the result to a global slot of its SM and head dim with the
 * release to the tensor-map proxy; the copying threads acquire it before
 * their first copy. A slot's map is a function of its base address alone,
 * so a block whose slot already holds its base's map skips the build, and
 * blocks of one launch, which write identical maps, cannot disturb each
 * other; launches of one module's kernels are stream-ordered, as the
 * workspace already requires.
 *
 * The map views memory from a base address as rows of DH 16-bit elements,
 * every row split into DH/64 lines of 128 bytes: dims {64, rows, DH/64}
 * with strides {DH * 2, 128} bytes. A box of 16 rows lands as DH/64 blocks
 * of 16 lines, each line's 16-byte chunks XOR-permuted by the line's index
 * mod 8 (CU_TENSOR_MAP_SWIZZLE_128B): chunk ch of row r is at
 * fz_att_swz(r, ch). Eight consecutive rows of a chunk column fall in
 * eight different bank groups, so ldmatrix reads it without conflicts.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */

// ---- attention: the tensor copy engine (codegen/cuda/attention_bulk_lib.go) ----
// FZ_ATT_BULK: whether the target has the engine and tensormap.replace
// (sm_90a); elsewhere the functions below are empty and the decode kernel
// does not call them.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FZ_ATT_BULK 1
#else
#define FZ_ATT_BULK 0
#endif
// FZ_ATT_TSTRIDE(b) is a global stride of b bytes as tensormap.replace
// takes it: CUDA 13's ptxas takes bytes, 12.4's (the NVRTC fuser builds
// with) writes the value into the map's field unshifted, and the field
// holds bytes / 16 (seen on the H200 against cuTensorMapEncodeTiled).
#if __CUDACC_VER_MAJOR__ < 13
#define FZ_ATT_TSTRIDE(b) ((b) >> 4)
#else
#define FZ_ATT_TSTRIDE(b) (b)
#endif
// Rows a map addresses from its base (int32 box coordinates).
#define FZ_ATT_TROWS 0x7fffffff
// Global tensor-map slots: one per SM (%smid below FZ_ATT_TSLOTS) and
// head dim (64, 128, 192, 256), so that a slot's map is a function of
// its base address alone.
#define FZ_ATT_TSLOTS 256
static __device__ __align__(128) u64 fz_att_tmaps[4 * FZ_ATT_TSLOTS * 16];
// fz_att_tslot is the map slot of the calling thread's SM, or null.
template <int DH> FZ_DEV u64* fz_att_tslot() {
  u32 smid;
  asm("mov.u32 %0, %%smid;" : "=r"(smid));
  return smid < FZ_ATT_TSLOTS ? fz_att_tmaps + ((DH / 64 - 1) * FZ_ATT_TSLOTS + smid) * 16 : (u64*)0;
}
// fz_att_tmap_build builds the map of rows of DH elements from base in
// shared memory sm (16 words, 128-byte aligned) and publishes it to global
// slot g, unless the slot's map already has that base (its first word is
// the base address; the rest depends on DH alone). All 32 lanes of one
// warp call it.
template <int DH> FZ_DEV void fz_att_tmap_build(u64* sm, u64* g, const void* base) {
  const int lane = threadIdx.x & 31;
#if FZ_ATT_BULK
  u64 have;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(have) : "l"(g) : "memory");
  if (__shfl_sync(0xffffffffu, have, 0) == (u64)base) return;
#endif
  ((u32*)sm)[lane] = 0u;
  __syncwarp();
#if FZ_ATT_BULK
  if (lane == 0) {
    const u32 s = fz_smem_addr(sm);
    asm volatile(
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;\n\t"
        "tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 2;\n\t"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, 64;\n\t"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, 16;\n\t"
        "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 2, %2;\n\t"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, 64;\n\t"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %3;\n\t"
        "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 2, %2;\n\t"
        "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %4;\n\t"
        "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 1, %5;\n\t"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;\n\t"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;\n\t"
        "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 2, 1;\n\t"
        "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], 1;\n\t"
        "tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;\n\t"
        "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 3;\n\t"
        "tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], 0;"
        :: "r"(s), "l"((u64)base), "r"(DH / 64), "r"(FZ_ATT_TROWS), "l"((u64)FZ_ATT_TSTRIDE(DH * 2)), "l"((u64)FZ_ATT_TSTRIDE(128)) : "memory");
  }
  __syncwarp();
  asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
               :: "l"(g), "r"(fz_smem_addr(sm)) : "memory");
#endif
}
// fz_att_tmap_acquire makes the map at g visible to the calling thread's copies.
FZ_DEV void fz_att_tmap_acquire(const u64* g) {
#if FZ_ATT_BULK
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(g) : "memory");
#endif
}
// fz_att_mbar_init initialises the mbarrier at b for one arrival a phase
// (and fences the initialisation).
FZ_DEV void fz_att_mbar_init(u32 b) {
#if FZ_ATT_BULK
  asm volatile("mbarrier.init.shared.b64 [%0], 1;\n\tfence.mbarrier_init.release.cluster;" :: "r"(b) : "memory");
#endif
}
// fz_att_mbar_wait waits for the phase of parity ph of the mbarrier at b.
FZ_DEV void fz_att_mbar_wait(u32 b, u32 ph) {
#if FZ_ATT_BULK
  asm volatile("{\n\t.reg .pred p;\n\tW: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n\t@!p bra W;\n\t}" :: "r"(b), "r"(ph) : "memory");
#endif
}
// fz_att_tma_kv copies rows rk .. rk + 15 and rv .. rv + 15 of map g to
// shared addresses dk and dv (DH * 32 bytes each), completing on the
// mbarrier at b. One thread calls it, after the warp's reads of the stage.
template <int DH> FZ_DEV void fz_att_tma_kv(u32 dk, u32 dv, const u64* g, int rk, int rv, u32 b) {
#if FZ_ATT_BULK
  asm volatile("fence.proxy.async.shared::cta;\n\tmbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(64 * DH) : "memory");
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dk), "l"(g), "r"(0), "r"(rk), "r"(0), "r"(b) : "memory");
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dv), "l"(g), "r"(0), "r"(rv), "r"(0), "r"(b) : "memory");
#endif
}
// fz_att_swz is the byte offset of 16-byte chunk ch of row r in a swizzled
// tile of 16 rows.
FZ_DEV u32 fz_att_swz(int r, int ch) { return (u32)((ch >> 3) * 2048 + r * 128 + (((ch & 7) ^ (r & 7)) << 4)); }
