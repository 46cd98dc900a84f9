/*
 * The parts of `gpuprobe model` (server/cli/model*.c): the dispatcher in
 * model.c runs occupancy itself and hands predict to model_predict.c.
 */
#ifndef GPUPROBE_SERVER_CLI_MODEL_H
#define GPUPROBE_SERVER_CLI_MODEL_H

/* `gpuprobe model predict ...`; argv[0] is "predict". */
int cmd_model_predict(int argc, char **argv);

#endif
