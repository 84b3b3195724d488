/* KEX_AlgorithmInstance.h -- pqperf test candidate TOY-KEX (not a secure key exchange). */
#ifndef KEX_ALGORITHM_INSTANCE_H
#define KEX_ALGORITHM_INSTANCE_H
#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "TOY-KEX"
typedef unsigned char uc;
typedef unsigned long long ull;
ull kex_get_passes_num(void);
ull kex_get_pk_len_bytes(void);
ull kex_get_sk_len_bytes(void);
ull kex_get_sta_len_bytes(void);
ull kex_get_stb_len_bytes(void);
ull kex_get_ss_len_bytes(void);
ull kex_get_total_msg_len_bytes(void);
int kex_init_a(uc *pka, ull *pka_len, uc *ska, ull *ska_len, uc *sta, ull *sta_len);
int kex_init_b(uc *pkb, ull *pkb_len, uc *skb, ull *skb_len, uc *stb, ull *stb_len);
int kex_generate_pass1_msg_a(uc *ska, ull ska_len, uc *pkb, ull pkb_len, uc *sta, ull *sta_len,
                             uc *m1, ull *m1_len);
int kex_generate_pass2_msg_b(uc *skb, ull skb_len, uc *pka, ull pka_len, uc *m1, ull m1_len,
                             uc *stb, ull *stb_len, uc *m2, ull *m2_len);
int kex_derive_ss_a(uc *ska, ull ska_len, uc *pkb, ull pkb_len, uc *mb, ull mb_len, uc *sta,
                    ull sta_len, uc *ssa, ull *ssa_len);
int kex_derive_ss_b(uc *skb, ull skb_len, uc *pka, ull pka_len, uc *ma, ull ma_len, uc *stb,
                    ull stb_len, uc *ssb, ull *ssb_len);
#endif
