// Kernels for the runtime's GPU test; testdata/kernels.ptx is this file
// compiled by NVRTC for compute_80 (kernels_test.go keeps the two in step).
extern "C" __global__ void axpy(float* x, float a, long long n) {
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = x[i] * a + 1.0f;
}

// reverse reverses x[0:n] into y through dynamic shared memory (one block).
extern "C" __global__ void reverse(const float* x, float* y, int n) {
	extern __shared__ float buf[];
	for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = x[i];
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = buf[n - 1 - i];
}
