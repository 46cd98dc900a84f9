/*
 * Whole reads and writes on file descriptors, for the files gpuprobe writes
 * and reads back itself (binary traces, the spool's runs, request bodies
 * spooled by the HTTP transport).
 *
 * DESIGN
 * read(2) and write(2) may move fewer bytes than asked, or be interrupted
 * by a signal before moving any; these go on until all n bytes have moved,
 * retrying EINTR, so a caller only sees done or failed. The offset says
 * where: FD_CURRENT is the descriptor's own file offset, which then
 * advances (a pipe, a file written in order); any other offset is used with
 * pread/pwrite and leaves the file offset alone.
 */
#ifndef GPUPROBE_UTIL_FDIO_H
#define GPUPROBE_UTIL_FDIO_H

#include <stddef.h>
#include <sys/types.h>

#define FD_CURRENT ((off_t)-1)

/* Writes p[0..n) to fd at off. 0, or -1 with errno as the failing call left
 * it (unchanged when a call wrote nothing). */
int fd_write_all(int fd, const void *p, size_t n, off_t off);
/* Reads n bytes from fd at off into p. 0; -1 with errno set; 1 when the
 * file ended first. */
int fd_read_all(int fd, void *p, size_t n, off_t off);

#endif
