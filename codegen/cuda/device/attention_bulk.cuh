/*
 * The Hopper tensor copy engine as the decode attention uses it (sm_90a),
 * on tma.cuh's pieces: its tensor map of KV rows, the tile copy of a key
 * and a value tile, and the 128-byte swizzle it writes shared memory in.
 * Emitted before attention_flash.cuh, whose decode template uses it.
 *
 * A map slot is per SM and head dim, and a slot's map is a function of its
 * base address alone, so a block whose slot already holds its base's map
 * skips the build, and blocks of one launch, which write identical maps,
 * cannot disturb each other; launches of one module's kernels are
 * stream-ordered, as the workspace already requires.
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

// ---- attention: the tensor copy engine (device/attention_bulk.cuh) ----
// Rows a map addresses from its base (int32 box coordinates).
#define FZ_ATT_TROWS 0x7fffffff
// Global tensor-map slots: one per SM (FZ_TMA_SLOTS) and head dim (64,
// 128, 192, 256), so that a slot's map is a function of its base address
// alone.
static __device__ __align__(128) u64 fz_att_tmaps[4 * FZ_TMA_SLOTS * 16];
// fz_att_tslot is the map slot of the calling thread's SM, or null.
template <int DH> FZ_DEV u64* fz_att_tslot() {
  const u32 smid = fz_smid();
  return smid < FZ_TMA_SLOTS ? fz_att_tmaps + ((DH / 64 - 1) * FZ_TMA_SLOTS + smid) * 16 : (u64*)0;
}
// fz_att_tmap_build builds the map of rows of DH elements from base in
// shared memory sm (16 words, 128-byte aligned) and publishes it to global
// slot g, unless the slot's map already has that base (its first word is
// the base address; the rest depends on DH alone). All 32 lanes of one
// warp call it.
template <int DH> FZ_DEV void fz_att_tmap_build(u64* sm, u64* g, const void* base) {
  const int lane = threadIdx.x & 31;
#if FZ_TMA
  u64 have;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(have) : "l"(g) : "memory");
  if (__shfl_sync(0xffffffffu, have, 0) == (u64)base) return;
#endif
  ((u32*)sm)[lane] = 0u;
  __syncwarp();
#if FZ_TMA
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
        :: "r"(s), "l"((u64)base), "r"(DH / 64), "r"(FZ_ATT_TROWS), "l"((u64)FZ_TMA_STRIDE(DH * 2)), "l"((u64)FZ_TMA_STRIDE(128)) : "memory");
  }
  __syncwarp();
  fz_tmap_publish(g, sm);
#endif
}
// fz_att_tma_kv copies rows rk .. rk + 15 and rv .. rv + 15 of map g to
// shared addresses dk and dv (DH * 32 bytes each), completing on the
// mbarrier at b. One thread calls it, after the warp's reads of the stage.
template <int DH> FZ_DEV void fz_att_tma_kv(u32 dk, u32 dv, const u64* g, int rk, int rv, u32 b) {
#if FZ_TMA
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
