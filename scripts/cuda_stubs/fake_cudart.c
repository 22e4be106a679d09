/* A stand-in for the few CUDA runtime calls torch makes while compiling a training step
 * without a GPU (C++ autograd asks the runtime for the device and the current stream).
 * Preloaded (LD_PRELOAD) by scripts/record_cuda_codegen.py; built with a version script that
 * gives every symbol the version node of the libcudart torch links (libcudart.so.12/13).
 * Every call succeeds and reports one device, device 0; nothing runs. */
typedef int cudaError_t;
typedef void *cudaStream_t;
#define SUCCESS 0

cudaError_t cudaGetDeviceCount(int *n) { if (n) *n = 1; return SUCCESS; }
cudaError_t cudaGetDevice(int *d) { if (d) *d = 0; return SUCCESS; }
cudaError_t cudaSetDevice(int d) { (void)d; return SUCCESS; }
cudaError_t cudaGetLastError(void) { return SUCCESS; }
cudaError_t cudaPeekAtLastError(void) { return SUCCESS; }
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return SUCCESS;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t s, int *status) {
    (void)s;
    if (status) *status = 0; /* cudaStreamCaptureStatusNone */
    return SUCCESS;
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, int *status, unsigned long long *id) {
    (void)s;
    if (status) *status = 0;
    if (id) *id = 0;
    return SUCCESS;
}
cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode) { (void)mode; return SUCCESS; }
cudaError_t cudaDeviceSynchronize(void) { return SUCCESS; }
cudaError_t cudaDriverGetVersion(int *v) { if (v) *v = 13000; return SUCCESS; }
cudaError_t cudaRuntimeGetVersion(int *v) { if (v) *v = 13000; return SUCCESS; }
const char *cudaGetErrorString(cudaError_t e) { (void)e; return "no error (stand-in runtime)"; }
const char *cudaGetErrorName(cudaError_t e) { (void)e; return "cudaSuccess"; }
