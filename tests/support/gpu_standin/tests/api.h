/* The CUDA driver and NCCL calls the stand-in's own checks make, declared
 * with the C signatures of cuda.h and nccl.h (this machine has neither). */
#ifndef STANDIN_TEST_API_H
#define STANDIN_TEST_API_H
#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUgraph;
typedef void *CUgraphExec;
enum { CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, CU_STREAM_CAPTURE_MODE_RELAXED };

CUresult cuInit(unsigned flags);
CUresult cuDriverGetVersion(int *v);
CUresult cuDeviceGetCount(int *n);
CUresult cuDeviceGet(CUdevice *d, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice d);
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d);
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d);
CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer);
CUresult cuDeviceGetP2PAttribute(int *v, int attr, CUdevice src, CUdevice dst);
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d);
CUresult cuCtxSetCurrent(CUcontext c);
CUresult cuCtxGetDevice(CUdevice *d);
CUresult cuCtxSynchronize(void);
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags);
CUresult cuCtxDisablePeerAccess(CUcontext peer);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned flags);
CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags);
CUresult cuMemFreeHost(void *p);
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total);
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n);
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuStreamCreate(CUstream *s, unsigned flags);
CUresult cuStreamDestroy_v2(CUstream s);
CUresult cuStreamSynchronize(CUstream s);
CUresult cuStreamQuery(CUstream s);
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags);
CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *arg);
CUresult cuEventCreate(CUevent *e, unsigned flags);
CUresult cuEventDestroy_v2(CUevent e);
CUresult cuEventRecord(CUevent e, CUstream s);
CUresult cuEventSynchronize(CUevent e);
CUresult cuEventQuery(CUevent e);
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b);
CUresult cuStreamBeginCapture_v2(CUstream s, int mode);
CUresult cuStreamEndCapture(CUstream s, CUgraph *g);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *x, CUgraph g, unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec x, CUstream s);
CUresult cuGraphExecDestroy(CUgraphExec x);
CUresult cuGraphDestroy(CUgraph g);
typedef void *CUmodule;
typedef void *CUfunction;
CUresult cuModuleLoadData(CUmodule *m, const void *image);
CUresult cuModuleUnload(CUmodule m);
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream s, void **params, void **extra);
CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f, size_t (*smem_of)(int block),
                                          size_t smem, int limit);
CUresult cuGetErrorName(CUresult r, const char **s);
CUresult cuGetErrorString(CUresult r, const char **s);

typedef int ncclResult_t;
typedef void *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;
enum { ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64,
       ncclBfloat16 };
enum { ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg };

ncclResult_t ncclGetVersion(int *v);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t c);
ncclResult_t ncclCommAbort(ncclComm_t c);
ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *state);
ncclResult_t ncclCommCount(ncclComm_t c, int *n);
ncclResult_t ncclCommUserRank(ncclComm_t c, int *r);
ncclResult_t ncclCommCuDevice(ncclComm_t c, int *d);
const char *ncclGetErrorString(ncclResult_t r);
const char *ncclGetLastError(ncclComm_t c);
ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, CUstream st);
ncclResult_t ncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c, CUstream st);
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, CUstream st);
ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c, CUstream st);
ncclResult_t ncclReduce(const void *s, void *r, size_t n, int t, int op, int root, ncclComm_t c, CUstream st);
ncclResult_t ncclSend(const void *s, size_t n, int t, int peer, ncclComm_t c, CUstream st);
ncclResult_t ncclRecv(void *r, size_t n, int t, int peer, ncclComm_t c, CUstream st);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
#endif
