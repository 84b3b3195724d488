/* sig.c -- BROKEN-SIG: a syntax error (missing semicolon and brace) under every flag set. */
#include "SIG_AlgorithmInstance.h"

unsigned long long sig_get_pk_len_bytes(void) { return 32 }
