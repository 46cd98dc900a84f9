/*
 * An output file written whole or not at all, as every command that writes
 * a trace writes it (trace sort and convert, trace synth, trace capture).
 *
 * DESIGN
 * OUT is written as OUT.part and put into place at commit, so a reader never
 * sees half a file and a failure leaves nothing. The part file is made
 * afresh (O_EXCL, O_NOFOLLOW, after removing any file or link of that
 * name): a link planted as OUT.part in a shared directory is never written
 * through. Three outputs are not
 * files to replace: "-" is standard output (a duplicate of it); an existing
 * device, FIFO or terminal (-o /dev/null) is written in place, since a
 * rename over it would replace the device with a regular file (as root,
 * /dev/null itself). An existing regular OUT is swapped with the part file
 * (renameat2 RENAME_EXCHANGE) and the old one unlinked: a plain rename over
 * an existing file makes ext4 (auto_da_alloc) write the new data out inside
 * the rename, seconds on a large output; the swap is as atomic and does not.
 */
#ifndef GPUPROBE_UTIL_OUTFILE_H
#define GPUPROBE_UTIL_OUTFILE_H

#include <limits.h>
#include <stddef.h>

struct outfile {
    const char *path;        /* OUT as given */
    char part[PATH_MAX + 8]; /* OUT.part, when written through one */
    int to_stdout;           /* OUT is "-" */
    int direct;              /* OUT is a device, FIFO or terminal: written in place */
    int committed;           /* the part file is in place */
};

/* Opens OUT for writing (see DESIGN); the descriptor, or -1 with the reason
 * in err. The caller closes it before outfile_commit. */
int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);
/* Puts the part file into place; 0, or -1 with the reason in err. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);
/* After a failure: removes what this output wrote (the part file, or OUT
 * once committed); a device or standard output is left alone. */
void outfile_discard(const struct outfile *o);
/* The name to give in messages: OUT.part, OUT itself, or "(standard output)". */
const char *outfile_name(const struct outfile *o);
/* Bytes in OUT once committed; -1 for a device or standard output. */
long long outfile_bytes(const struct outfile *o);
/* For a command run by hand: SIGINT, SIGTERM or SIGHUP first removes the
 * part files being written, then takes its default action (the process
 * ends as killed by it). A signal the process was started ignoring stays
 * ignored. At most four outputs at once are covered. */
void outfile_remove_on_signals(void);

#endif
