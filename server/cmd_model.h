/*
 * The parts of `gpuprobe model` (server/cmd_model*.c): the dispatcher in
 * cmd_model.c runs occupancy itself and hands predict to cmd_model_predict.c.
 */
#ifndef GPUPROBE_SERVER_CMD_MODEL_H
#define GPUPROBE_SERVER_CMD_MODEL_H

/* `gpuprobe model predict ...`; argv[0] is "predict". */
int cmd_model_predict(int argc, char **argv);

#endif
