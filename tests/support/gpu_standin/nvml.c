/*
 * The NVML part of commbench's GPU stand-in, built as libnvidia-ml.so.1
 * and linked against the CUDA stand-in (libcuda.so.1), whose machine file
 * it reads. Only the calls commbench makes (src/gpu/nvml.rs), with nvml.h's
 * names, values and signatures: init and shutdown, the driver's version
 * (fixed: 555.42.06), a handle by PCI bus id or index, and per NVLink its
 * state, version and far end. Test code only:
 * see README.md.
 *
 * Links: on a machine with `nvlink.switch=1` every GPU has the lanes of its
 * pairs (the same for every pair) as links to NVSwitches; else each GPU's
 * links go to its peers in machine order, the lanes of each pair in a row.
 * Links from there up to NVML_NVLINK_MAX_LINKS are inactive. The version is
 * the machine's `nvlink.version` as nvml.h's nvmlNvlinkVersion_t.
 */
#include <stdio.h>
#include <string.h>

#include "standin.h"

#define API __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
};
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
#define NVML_NVLINK_MAX_LINKS 18

typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

/* A device handle: one per machine GPU. */
struct nvmlDevice_st {
    unsigned magic;
    int index;
};
typedef struct nvmlDevice_st *nvmlDevice_t;
#define DEVICE_MAGIC 0x4e564d4cu

static struct nvmlDevice_st g_dev[STANDIN_MAX_GPUS];
static const struct standin_machine *g_m;
static int g_refs;

API nvmlReturn_t nvmlInit_v2(void)
{
    const struct standin_machine *m = commbench_standin_machine_file();
    if (!m)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    g_m = m;
    for (int i = 0; i < m->ngpus; i++) {
        g_dev[i].magic = DEVICE_MAGIC;
        g_dev[i].index = i;
    }
    __atomic_add_fetch(&g_refs, 1, __ATOMIC_SEQ_CST);
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlShutdown(void)
{
    int refs = __atomic_load_n(&g_refs, __ATOMIC_SEQ_CST);
    if (refs <= 0)
        return NVML_ERROR_UNINITIALIZED;
    __atomic_sub_fetch(&g_refs, 1, __ATOMIC_SEQ_CST);
    return NVML_SUCCESS;
}

API const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}

static int initialised(void)
{
    return __atomic_load_n(&g_refs, __ATOMIC_SEQ_CST) > 0;
}

/* The machine GPU of a handle, or -1 for one NVML did not give. */
static int gpu_of(nvmlDevice_t d)
{
    for (int i = 0; g_m && i < g_m->ngpus; i++)
        if (d == &g_dev[i] && d->magic == DEVICE_MAGIC)
            return i;
    return -1;
}

/* The kernel driver's version: the stand-in's own, fixed. */
#define STANDIN_DRIVER_VERSION "555.42.06"

API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (!initialised())
        return NVML_ERROR_UNINITIALIZED;
    if (!version)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (length < sizeof STANDIN_DRIVER_VERSION)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(version, STANDIN_DRIVER_VERSION, sizeof STANDIN_DRIVER_VERSION);
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (!initialised())
        return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= (unsigned)g_m->ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &g_dev[index];
    return NVML_SUCCESS;
}

/* "0000:3b:00.0" or "00000000:3B:00.0" (either case). */
API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *device)
{
    if (!initialised())
        return NVML_ERROR_UNINITIALIZED;
    if (!bus_id || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned dom, bus, dev, fn;
    int used = 0;
    if (sscanf(bus_id, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &used) != 4 || bus_id[used] != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < g_m->ngpus; i++) {
        const struct standin_gpu *g = &g_m->gpu[i];
        if (g->pci_domain == dom && g->pci_bus == bus && g->pci_device == dev && g->pci_function == fn) {
            *device = &g_dev[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* The far end of `link` of GPU `i`: a machine GPU (>= 0), a switch (-2),
 * or none (-1: the link is inactive). */
static int far_end(int i, unsigned link)
{
    if (g_m->nvswitch) {
        for (int j = 0; j < g_m->ngpus; j++)
            if (j != i && g_m->link[i][j] == STANDIN_LINK_NVLINK)
                return link < g_m->nvlinks[i][j] ? -2 : -1;
        return -1;
    }
    unsigned next = 0;
    for (int j = 0; j < g_m->ngpus; j++) {
        if (j == i || g_m->link[i][j] != STANDIN_LINK_NVLINK)
            continue;
        next += g_m->nvlinks[i][j];
        if (link < next)
            return j;
    }
    return -1;
}

/* Checks the call's handle and link; the far end in *end. */
static nvmlReturn_t check(nvmlDevice_t device, unsigned link, const void *out, int *gpu, int *end)
{
    if (!initialised())
        return NVML_ERROR_UNINITIALIZED;
    *gpu = gpu_of(device);
    if (*gpu < 0 || !out || link >= NVML_NVLINK_MAX_LINKS)
        return NVML_ERROR_INVALID_ARGUMENT;
    *end = far_end(*gpu, link);
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, unsigned int *is_active)
{
    int gpu, end;
    nvmlReturn_t r = check(device, link, is_active, &gpu, &end);
    if (r != NVML_SUCCESS)
        return r;
    *is_active = end == -1 ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link, unsigned int *version)
{
    int gpu, end;
    nvmlReturn_t r = check(device, link, version, &gpu, &end);
    if (r != NVML_SUCCESS)
        return r;
    if (end == -1)
        return NVML_ERROR_NOT_SUPPORTED;
    /* nvmlNvlinkVersion_t: 1.0 = 1, 2.0 = 2, 3.0 = 4, 4.0 = 6, 5.0 = 7. */
    static const unsigned by_major[] = {0, 1, 2, 4, 6, 7};
    *version = by_major[g_m->nvlink_version];
    return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
    int gpu, end;
    nvmlReturn_t r = check(device, link, pci, &gpu, &end);
    if (r != NVML_SUCCESS)
        return r;
    if (end == -1)
        return NVML_ERROR_NOT_SUPPORTED;
    memset(pci, 0, sizeof *pci);
    if (end >= 0) {
        const struct standin_gpu *g = &g_m->gpu[end];
        pci->domain = g->pci_domain;
        pci->bus = g->pci_bus;
        pci->device = g->pci_device;
        pci->pciDeviceId = 0x000010de; /* NVIDIA's vendor id; no device id modelled */
    } else {
        /* Four switches on a bus of their own, links spread across them. */
        pci->domain = 0;
        pci->bus = 0xf0 + link % 4;
        pci->device = 0;
        pci->pciDeviceId = 0x000010de;
    }
    unsigned fn = end >= 0 ? g_m->gpu[end].pci_function : 0;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", pci->domain, pci->bus, pci->device, fn);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.%X", pci->domain, pci->bus, pci->device, fn);
    return NVML_SUCCESS;
}
