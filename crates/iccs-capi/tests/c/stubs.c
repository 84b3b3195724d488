/* stubs.c -- empty stand-ins for the artifact's ICCS symbols (size baseline). */
#include "auxfunc.h"
#include "drng.h"

int sm3hash(int d, const unsigned char *m, unsigned long long l, unsigned char *o)
{ (void)d; (void)m; (void)l; (void)o; return 0; }
int pseudohash(int d, const unsigned char *m, unsigned long long l, unsigned char *o)
{ (void)d; (void)m; (void)l; (void)o; return 0; }
int pseudoXOF(unsigned long long d, const unsigned char *m, unsigned long long l, unsigned char *o)
{ (void)d; (void)m; (void)l; (void)o; return 0; }
int init_random_number(DRNG_ctx *c, const unsigned char *s, unsigned long long l)
{ (void)c; (void)s; (void)l; return 0; }
int get_random_number(DRNG_ctx *c, unsigned char *o, unsigned long long l)
{ (void)c; (void)o; (void)l; return 0; }
