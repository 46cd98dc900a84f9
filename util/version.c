/*
 * Which gpuprobe this is (see version.h).
 */
#include "util/version.h"

const char *gpuprobe_version(void)
{
    return GPUPROBE_VERSION " (" GPUPROBE_GITREV ")";
}

const char *gpuprobe_revision(void)
{
    return GPUPROBE_GITREV;
}
