/*
 * signals.h - what the commands that scan (scan, check, dupes) do with
 * SIGINT, SIGTERM and SIGHUP: stop, keep what they found, and say so.
 */
#ifndef FIDX_SIGNALS_H
#define FIDX_SIGNALS_H

#include <stdatomic.h>

/* Set by the first SIGINT, SIGTERM or SIGHUP after fidx_catch_signals(). */
extern atomic_bool fidx_interrupted;

/*
 * From now on, SIGINT, SIGTERM and SIGHUP set fidx_interrupted (a scan's
 * cancel flag) instead of killing the process; a second one kills it as
 * usual.
 */
void fidx_catch_signals(void);

#endif /* FIDX_SIGNALS_H */
