/*
 * Test support: contracts. A function's preconditions are assert()s (kept
 * in every build); a test proves one holds by making the call that breaks
 * it in a child process and watching the child abort.
 */
#ifndef GPUPROBE_TESTS_DEATH_H
#define GPUPROBE_TESTS_DEATH_H

/* Runs fn(arg) in a forked child with stderr silenced. 1 when the child
 * was killed by SIGABRT (a failed assert), 0 when it returned or died of
 * anything else. */
int dies_by_assert(void (*fn)(void *arg), void *arg);

#endif
