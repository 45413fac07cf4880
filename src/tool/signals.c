/*
 * signals.c - the interruption of a scan (signals.h).
 */
#include "signals.h"

#include <signal.h>
#include <stdbool.h>

atomic_bool fidx_interrupted;

/* SIGINT/SIGTERM/SIGHUP: stop the scan; a second signal kills as usual. */
static void on_signal(int sig)
{
	atomic_store(&fidx_interrupted, true);
	signal(sig, SIG_DFL);
}

void fidx_catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}
