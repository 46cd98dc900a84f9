/*
 * `gpuprobe worker`: the child side of every job and of device discovery.
 * The daemon starts it through the worker protocol (protocol.h); by hand it
 * runs one job in the calling shell, which is how a kind is debugged.
 */
#ifndef GPUPROBE_SERVER_JOBS_WORKER_H
#define GPUPROBE_SERVER_JOBS_WORKER_H

/* The whole `gpuprobe worker ...` command: argv[0] is "worker". Exit status:
 * 0 when an envelope was written (the job's own success or failure is in
 * it), 1 when stdout could not be written, 2 for a call refused before any
 * work. */
int worker_main(int argc, char **argv);

#endif
