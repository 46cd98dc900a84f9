/*
 * Which gpuprobe this is: the version and the commit it was built from, as
 * `gpuprobe --version` prints them and as every stored result records.
 */
#ifndef GPUPROBE_UTIL_VERSION_H
#define GPUPROBE_UTIL_VERSION_H

/* "0.1.0 (5e9ce099de6d)": VERSION and the commit (the Makefile rebuilds this
 * file whenever HEAD moves). */
const char *gpuprobe_version(void);
/* The commit alone ("5e9ce099de6d"; "unknown" outside a git checkout). */
const char *gpuprobe_revision(void);

#endif
