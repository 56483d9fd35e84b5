/* errmsg.h - the one way engine code reports an error it cannot return as
 * a bare errno: a caller-owned buffer that receives a sentence naming the
 * member, the field and what was expected. */
#ifndef RAIDFUSE_ERRMSG_H
#define RAIDFUSE_ERRMSG_H

#include <stdarg.h>
#include <stdio.h>

__attribute__((format(printf, 3, 4))) static inline int errmsg_set(char *err, size_t errlen,
                                                                   const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* Set err and return rc (a negative errno): `return errmsg_fail(...)`. */
#define errmsg_fail(rc, err, errlen, ...) (errmsg_set((err), (errlen), __VA_ARGS__), (rc))

#endif
