/* textbuf.h - appending formatted text to a fixed buffer, for the status
 * and control texts: it never overruns and stops quietly when full (a
 * status that is cut short is better than none). */
#ifndef RAIDFUSE_TEXTBUF_H
#define RAIDFUSE_TEXTBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct textbuf {
	char *buf;
	size_t len;   /* capacity */
	size_t used;  /* bytes written, excluding the NUL */
};

static inline struct textbuf textbuf_init(char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	return (struct textbuf){ buf, len, 0 };
}

__attribute__((format(printf, 2, 3))) static inline void textbuf_appendf(struct textbuf *t,
                                                                         const char *fmt, ...)
{
	if (t->used >= t->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used = t->used + (size_t)n < t->len ? t->used + (size_t)n : t->len;
}

#endif
