/* sys/random.h - getrandom(2) for the Windows build, from the system RNG of CNG (win.c). */
#ifndef FIDX_COMPAT_SYS_RANDOM_H
#define FIDX_COMPAT_SYS_RANDOM_H

#include <sys/types.h>

#define GRND_NONBLOCK 0x01

/* Fills buf with n random bytes.  Returns n, or -1 with errno set. */
ssize_t getrandom(void *buf, size_t n, unsigned flags);

#endif
