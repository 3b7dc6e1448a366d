#ifndef TI_DESCRIBE_H
#define TI_DESCRIBE_H

/* The static JSON self-description returned by ti_describe(). */
const char *describe_document(void);

#endif
