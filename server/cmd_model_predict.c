/*
 * `gpuprobe model predict`: placeholder until the kernel-time model lands.
 */
#include "server/cli.h"
#include "server/cmd_model.h"

int cmd_model_predict(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("model predict", 1, "not available yet");
}
