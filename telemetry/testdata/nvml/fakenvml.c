/* A stand-in for libnvidia-ml.so.1 with two GPUs, for the NVML source's
   tests on machines without a GPU: the same symbols, signatures and return
   codes as NVML (nvml.h), fixed values. gpu0 has the total energy counter
   (1000 mJ more at each call), gpu1 has none (NVML_ERROR_NOT_SUPPORTED, as
   a GPU before Volta). Both draw 250.5 W at 75 % utilisation; gpu0 has
   an enforced power limit of 700 W, gpu1 none. */
#include <stdint.h>

typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
static unsigned long long energy = 5000000ULL;

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, uintptr_t *dev) {
	if (i > 1) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*dev = i + 1;
	return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(uintptr_t dev, unsigned long long *mj) {
	if (dev != 1) return 3; /* NVML_ERROR_NOT_SUPPORTED */
	energy += 1000;
	*mj = energy;
	return 0;
}
int nvmlDeviceGetPowerUsage(uintptr_t dev, unsigned int *mw) { *mw = 250500; return 0; }
int nvmlDeviceGetUtilizationRates(uintptr_t dev, nvmlUtilization_t *u) { u->gpu = 75; u->memory = 10; return 0; }
const char *nvmlErrorString(int rc) { return rc == 3 ? "Not Supported" : "Unknown Error"; }
int nvmlDeviceGetEnforcedPowerLimit(uintptr_t dev, unsigned int *mw) {
	if (dev != 1) return 3; /* gpu1: NVML_ERROR_NOT_SUPPORTED */
	*mw = 700000; /* 700 W, an H100 SXM's */
	return 0;
}
