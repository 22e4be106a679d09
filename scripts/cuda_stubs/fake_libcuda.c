/* A stub libcuda.so.1 (the driver API) for compiling without a GPU: found first on
 * LD_LIBRARY_PATH by scripts/record_cuda_codegen.py. One device, its primary context active;
 * nothing runs. */
typedef int CUresult;
#define SUCCESS 0

CUresult cuInit(unsigned int flags) { (void)flags; return SUCCESS; }
CUresult cuDeviceGetCount(int *n) { if (n) *n = 1; return SUCCESS; }
CUresult cuDeviceGet(int *d, int ordinal) { if (d) *d = ordinal; return SUCCESS; }
CUresult cuDriverGetVersion(int *v) { if (v) *v = 13000; return SUCCESS; }
CUresult cuDevicePrimaryCtxGetState(int dev, unsigned int *flags, int *active) {
    (void)dev;
    if (flags) *flags = 0;
    if (active) *active = 1;
    return SUCCESS;
}
CUresult cuGetErrorString(CUresult e, const char **s) { (void)e; if (s) *s = "no error (stub driver)"; return SUCCESS; }
CUresult cuGetErrorName(CUresult e, const char **s) { (void)e; if (s) *s = "CUDA_SUCCESS"; return SUCCESS; }
