/* langinfo.h - nl_langinfo(CODESET) for the Windows build: fidx sets the console to
 * UTF-8 at start (win.c), so the codeset is always "UTF-8". */
#ifndef FIDX_COMPAT_LANGINFO_H
#define FIDX_COMPAT_LANGINFO_H

#define CODESET 14
#define nl_langinfo(item) ((void)(item), "UTF-8")

#endif
