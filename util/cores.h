/*
 * How many cores are idle now: what decides whether work that can use a
 * second core (the trace sorter's second thread, the CSV copy's second
 * parser) starts one.
 */
#ifndef GPUPROBE_UTIL_CORES_H
#define GPUPROBE_UTIL_CORES_H

/* The online cores less the threads that can run at this moment, the
 * caller among them: the kernel's count of runnable threads
 * (/proc/loadavg's fourth field; the fewest of up to 8 readings 1 ms
 * apart, so a busy machine costs the caller 7 ms), or, where that cannot
 * be read, the one-minute load average plus the caller. Not the average
 * first: it still counts, for a minute, a job that has just ended, so
 * sorts run one after another on an idle machine each saw it busy. May be
 * negative. */
double cores_idle(void);

/* The runnable threads in the text of /proc/loadavg ("0.52 0.31 0.20
 * 3/412 9876": 3): 0 with *running set, -1 for any other text. */
int cores_parse_loadavg(const char *text, long *running);

#endif
