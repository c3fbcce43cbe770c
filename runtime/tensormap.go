//go:build cuda

package runtime

// #include <cuda.h>
// static CUresult rowMap(unsigned long long* out, CUdeviceptr base, unsigned long long rows, unsigned dh) {
//   CUtensorMap m; // 64-byte aligned, as the encoder requires: on the C stack, not Go's
//   cuuint64_t dims[3] = {64, rows, dh / 64};
//   cuuint64_t strides[2] = {(cuuint64_t)dh * 2, 128};
//   cuuint32_t box[3] = {64, 16, dh / 64};
//   cuuint32_t estr[3] = {1, 1, 1};
//   CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_UINT16, 3, (void*)base, dims, strides, box, estr,
//                                       CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
//                                       CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
//   for (int i = 0; i < 16; i++) out[i] = r == CUDA_SUCCESS ? m.opaque[i] : 0;
//   return r;
// }
import "C"

import (
	"fmt"
	"unsafe"
)

// TensorMap is a CUtensorMap, a kernel argument of 128 bytes passed by
// value (a const __grid_constant__ parameter).
type TensorMap [16]uint64

// RowMap encodes the tensor map of codegen.RowMap: memory from the lower of
// k and v viewed as rows rows of dh 16-bit elements, each row dh/64 lines
// of 128 bytes, copied in boxes of 16 rows into the 128-byte swizzle. A
// base that is not 16-byte aligned, which the engine cannot address, gets
// the zero map: the kernel checks the alignment itself and copies such
// rows without the engine.
func RowMap(k, v DevicePtr, rows int64, dh int) (TensorMap, error) {
	var m TensorMap
	base := min(k, v)
	if base%16 != 0 {
		return m, nil
	}
	if dh < 64 || dh%64 != 0 || dh > 256 || rows < 1 || rows > 1<<32 {
		return m, fmt.Errorf("runtime: row map of %d rows of %d elements", rows, dh)
	}
	r := C.rowMap((*C.ulonglong)(unsafe.Pointer(&m[0])), C.CUdeviceptr(base), C.ulonglong(rows), C.uint(dh))
	if err := check(r, "encode row tensor map"); err != nil {
		return TensorMap{}, err
	}
	return m, nil
}
