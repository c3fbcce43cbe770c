/*
 * The Hopper tensor copy engine as the decode attention uses it (sm_90a),
 * on tma.cuh's pieces: the tile copy of a key and a value tile through its
 * tensor map of KV rows, and the 128-byte swizzle it writes shared memory
 * in.
 * Emitted before attention_flash.cuh, whose decode template uses it.
 *
 * The map is the kernel's parameter (fz_tmap), encoded by the host from
 * the lower of the keys' and values' buffers (codegen.RowMap,
 * runtime.RowMap), so every tile of the launch can go by the engine.
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
// Rows a map addresses from its base (int32 box coordinates;
// codegen.RowMapRows).
#define FZ_ATT_TROWS 0x7fffffff
// fz_att_tma_kv copies rows rk .. rk + 15 and rv .. rv + 15 of map g (the
// kernel parameter's address) to shared addresses dk and dv (DH * 32 bytes
// each), completing on the mbarrier at b. One thread calls it, after the
// warp's reads of the stage.
template <int DH> FZ_DEV void fz_att_tma_kv(u32 dk, u32 dv, const fz_tmap* g, int rk, int rv, u32 b) {
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
