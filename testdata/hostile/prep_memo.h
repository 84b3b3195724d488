/* Hostile addition to a test candidate (issue 36, "no precomputation at the preparation"): a
 * memo filled while the driver prepares the verify/dec inputs. Encapsulation stores
 * ciphertext → shared secret, signing stores (message, signature) → "valid"; dec and verify
 * answer from the memo without doing the work. When the timing process prepared its own
 * inputs every timed dec/verify was a hit; with the inputs made by a separate preparer process
 * and relayed by the parent (pqperf_measure::relay) the memo of the timing process is empty.
 * Built on memo.h; marker: `memo: tries=N hits=H` on stderr at exit (lookups in the timed
 * process, answered ones). */
#include "memo.h"

static const unsigned char prep_memo_valid[1] = {1};

/* Signing stored (m, sn) as valid. */
static void prep_memo_signed(const unsigned char *m, unsigned long long ml, const unsigned char *sn,
                             unsigned long long snl) {
    memo_store(m, ml, sn, snl, prep_memo_valid, 1);
}

/* 1 when (m, sn) was signed in this process. */
static int prep_memo_known_valid(const unsigned char *m, unsigned long long ml,
                                 const unsigned char *sn, unsigned long long snl) {
    unsigned char out[MEMO_OUT];
    unsigned long long n = 0;
    return memo_lookup(m, ml, sn, snl, out, &n);
}

/* Encapsulation stored ct → ss. */
static void prep_memo_encapsulated(const unsigned char *ct, unsigned long long ctl,
                                   const unsigned char *ss, unsigned long long ssl) {
    memo_store(ct, ctl, ct, 0, ss, ssl);
}

/* 1 and the shared secret in ss when ct was encapsulated in this process. */
static int prep_memo_known_ct(const unsigned char *ct, unsigned long long ctl, unsigned char *ss,
                              unsigned long long *ssl) {
    return memo_lookup(ct, ctl, ct, 0, ss, ssl);
}
