/*
 * The online-softmax step of the row kernels: fz_ms_add adds one score x to
 * the state (max m, sum s of exp(x - m)); fz_ms_merge and the warp and block
 * merges are in prelude.cuh. Every module holds it.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
FZ_DEV void fz_ms_add(float& m, float& s, float x) {
  if (x > m) { s = s * fz_exp(m - x) + 1.f; m = x; }
  else if (x != -FZ_INF) s += fz_exp(x - m);
}
