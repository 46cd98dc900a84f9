/*
 * Device discovery for the daemon: runs `gpuprobe worker --discover` in a
 * child with a deadline, records host and devices in the store, and installs
 * the inventory (and its encoded JSON) in the app.
 */
#ifndef GPUPROBE_SERVER_DISCOVERY_H
#define GPUPROBE_SERVER_DISCOVERY_H

struct app;
void discovery_run(struct app *app);

#endif
