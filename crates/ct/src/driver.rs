//! The C driver of a constant-time check, generated per instance: it links the instance's
//! `-g` objects, seeds the generator with public bytes, and for one operation (argv[1]) marks
//! the secret inputs undefined with memcheck client requests, enables error reporting only
//! around the call, and re-defines the public outputs afterwards.
//!
//! Random bytes: the link wraps `get_random_number` (ICCS DRNG) and `PQCLEAN_randombytes`
//! (NIST/PQClean) with `-Wl,--wrap`; while an operation under test runs, the outputs of the
//! generator are marked undefined (the DRNG output is secret), so the generator itself runs
//! on defined state and only the candidate's use of the bytes is checked. Draws the scheme
//! publishes (a randomizer copied into the signature) are not secret: a first pass
//! (`<op> probe`, run natively) reports every draw and every public output on the result
//! channel, the parent finds the draws that appear verbatim in the output
//! ([`public_draws`]), and the checked run (`<op> public=i,j`) leaves those defined.
//!
//! Driver exit status: 0 the operation returned 0; 1 it returned non-zero; 2 unknown
//! operation; 10 setup (keygen/encapsulation before the operation) failed.

use pqperf_model::catalog::{ApiKind, NistApi};
use pqperf_model::vocab::Category;

/// One operation the driver can run, with what it marks secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSpec {
    /// Operation name (argv[1]).
    pub name: &'static str,
    /// The inputs marked undefined.
    pub secrets: &'static [&'static str],
}

/// The secret input name of the generator's output.
pub const DRNG: &str = "DRNG output";
/// The secret input name of the secret key.
pub const SECRET_KEY: &str = "secret key";

/// Operations checked for a candidate kind (empty for hash instances: no secret input).
pub fn operations(kind: Category) -> Vec<OpSpec> {
    let op = |name, secrets| OpSpec { name, secrets };
    match kind {
        Category::Sign => vec![
            op("keygen", &[DRNG][..]),
            op("sign", &[SECRET_KEY, DRNG][..]),
        ],
        Category::Kem => vec![
            op("keygen", &[DRNG][..]),
            op("enc", &[DRNG][..]),
            op("dec", &[SECRET_KEY][..]),
        ],
        Category::Kex => vec![
            op("init_a", &[DRNG][..]),
            op("init_b", &[DRNG][..]),
            op("exchange", &["secret keys", "protocol states", DRNG][..]),
        ],
        Category::Hash => vec![],
    }
}

const PRELUDE: &str = r#"/* pqperf constant-time driver (generated). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/memcheck.h>

static int ct_secret_rng;
#define CT_SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define CT_PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#define CT_BEGIN() do { ct_secret_rng = 1; VALGRIND_ENABLE_ERROR_REPORTING; } while (0)
#define CT_END() do { VALGRIND_DISABLE_ERROR_REPORTING; ct_secret_rng = 0; } while (0)
typedef unsigned char uc;
typedef unsigned long long ull;

/* First pass (argv[2] = "probe"): every draw of the generator while the operation runs and
 * every public output after it go, as records 'D'/'O' (u32 index or 0, u32 length, bytes),
 * to the result channel; the parent finds the draws that appear verbatim in the public
 * output. Checked run (argv[2] = "public=i,j,..."): those draws stay defined, all others are
 * marked secret. */
static FILE *ct_probe;
static const char *ct_public = "";
static unsigned ct_draws;
static void ct_record(char kind, unsigned idx, const uc *p, size_t n) {
  unsigned len = (unsigned)n;
  fputc(kind, ct_probe); fwrite(&idx, 4, 1, ct_probe); fwrite(&len, 4, 1, ct_probe);
  fwrite(p, 1, n, ct_probe);
}
static int ct_is_public(unsigned i) {
  const char *p = ct_public;
  while (*p) {
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p) break;
    if (v == i) return 1;
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}
static void ct_drawn(uc *out, size_t n) {
  unsigned i = ct_draws++;
  if (ct_probe) ct_record('D', i, out, n);
  else if (!ct_is_public(i)) CT_SECRET(out, n);
}
/* The secret key of the operation: recorded with the public key in the first pass; marked
 * secret in the checked run except the ranges (argv[3] = "key=off:len,...") the parent found
 * verbatim in the public key. */
static const char *ct_key = "";
static void ct_secret_key(uc *sk, size_t n, const uc *pk, size_t pn) {
  if (ct_probe) { ct_record('K', 0, sk, n); ct_record('P', 0, pk, pn); }
  CT_SECRET(sk, n);
  const char *p = ct_key;
  while (*p) {
    char *e;
    unsigned long off = strtoul(p, &e, 10), len;
    if (*e != ':') break;
    len = strtoul(e + 1, &e, 10);
    if (off < n && len <= n - off) CT_PUBLIC(sk + off, len);
    if (*e != ',') break;
    p = e + 1;
  }
}
/* A public output of the operation (first pass only). */
#define CT_OUT(p, n) do { if (ct_probe) ct_record('O', 0, (const uc *)(p), (size_t)(n)); } while (0)

static uc *ct_alloc(size_t n) {
  uc *p = calloc(n ? n : 1, 1);
  if (!p) exit(10);
  return p;
}

static void ct_fill(uc *p, size_t n, unsigned k) {
  for (size_t i = 0; i < n; i++) p[i] = (uc)(i * 131u + k);
}
"#;

const ICCS_RNG: &str = r#"
int __real_get_random_number(void *drng, uc *out, ull bits);
int __wrap_get_random_number(void *drng, uc *out, ull bits);
int __wrap_get_random_number(void *drng, uc *out, ull bits) {
  int r = __real_get_random_number(drng, out, bits);
  if (ct_secret_rng && out) ct_drawn(out, (size_t)((bits + 7) / 8));
  return r;
}
int ngcc_seed(const uc *seed, ull len);
static void ct_seed(void) { uc s[48]; ct_fill(s, 48, 7); ngcc_seed(s, 48); }
"#;

const NIST_RNG: &str = r#"
int __real_PQCLEAN_randombytes(uint8_t *out, size_t n);
int __wrap_PQCLEAN_randombytes(uint8_t *out, size_t n);
int __wrap_PQCLEAN_randombytes(uint8_t *out, size_t n) {
  int r = __real_PQCLEAN_randombytes(out, n);
  if (ct_secret_rng && out) ct_drawn(out, n);
  return r;
}
int pqperf_nist_seed(const uint8_t *entropy);
static void ct_seed(void) { uc s[48]; ct_fill(s, 48, 7); pqperf_nist_seed(s); }
"#;

const MAIN: &str = r#"
int main(int argc, char **argv) {
  VALGRIND_DISABLE_ERROR_REPORTING;
  if (argc < 2 || argc > 4) return 2;
  if (argc == 4 && strncmp(argv[3], "key=", 4)) return 2;
  if (argc == 4) ct_key = argv[3] + 4;
  if (argc == 3 && !strcmp(argv[2], "probe")) {
    const char *fd = getenv("PQPERF_RESULT_FD");
    ct_probe = fd ? fdopen(atoi(fd), "w") : NULL;
    if (!ct_probe) return 2;
  } else if (argc >= 3 && !strncmp(argv[2], "public=", 7)) {
    ct_public = argv[2] + 7;
  } else if (argc >= 3) {
    return 2;
  }
  ct_seed();
  int rc = ct_run(argv[1]);
  if (ct_probe) fflush(ct_probe);
  CT_PUBLIC(&rc, sizeof rc);
  if (rc == 1) fprintf(stderr, "ct-driver: %s returned non-zero\n", argv[1]);
  if (rc == 10) fprintf(stderr, "ct-driver: setup for %s failed\n", argv[1]);
  return rc;
}
"#;

const ICCS_SIGN: &str = r#"
ull sig_get_pk_len_bytes(void); ull sig_get_sk_len_bytes(void); ull sig_get_sn_len_bytes(void);
int sig_keygen(uc *pk, ull *pk_len, uc *sk, ull *sk_len);
int sig_sign(uc *sk, ull sk_len, uc *m, ull m_len, uc *sn, ull *sn_len);
static int ct_run(const char *op) {
  ull pkn = sig_get_pk_len_bytes(), skn = sig_get_sk_len_bytes(), snn = sig_get_sn_len_bytes();
  uc *pk = ct_alloc(pkn), *sk = ct_alloc(skn), *sn = ct_alloc(snn + 4096), m[32];
  ull pl = pkn, sl = skn, snl = snn;
  int rc;
  ct_fill(m, sizeof m, 64);
  if (!strcmp(op, "keygen")) {
    CT_BEGIN(); rc = sig_keygen(pk, &pl, sk, &sl); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(pk, pl <= pkn ? pl : pkn);
    return rc != 0;
  }
  if (sig_keygen(pk, &pl, sk, &sl) != 0 || sl > skn) return 10;
  if (!strcmp(op, "sign")) {
    ct_secret_key(sk, sl, pk, pl);
    CT_BEGIN(); rc = sig_sign(sk, sl, m, sizeof m, sn, &snl); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(sn, snl <= snn + 4096 ? snl : snn + 4096);
    return rc != 0;
  }
  return 2;
}
"#;

const ICCS_KEM: &str = r#"
ull kem_get_pk_len_bytes(void); ull kem_get_sk_len_bytes(void);
ull kem_get_ct_len_bytes(void); ull kem_get_ss_len_bytes(void);
int kem_keygen(uc *pk, ull *pk_len, uc *sk, ull *sk_len);
int kem_enc(uc *pk, ull pk_len, uc *ss, ull *ss_len, uc *ct, ull *ct_len);
int kem_dec(uc *sk, ull sk_len, uc *ct, ull ct_len, uc *ss, ull *ss_len);
static int ct_run(const char *op) {
  ull pkn = kem_get_pk_len_bytes(), skn = kem_get_sk_len_bytes();
  ull ctn = kem_get_ct_len_bytes(), ssn = kem_get_ss_len_bytes();
  uc *pk = ct_alloc(pkn), *sk = ct_alloc(skn), *ct = ct_alloc(ctn), *ss = ct_alloc(ssn);
  ull pl = pkn, sl = skn, cl = ctn, ssl = ssn;
  int rc;
  if (!strcmp(op, "keygen")) {
    CT_BEGIN(); rc = kem_keygen(pk, &pl, sk, &sl); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(pk, pl <= pkn ? pl : pkn);
    return rc != 0;
  }
  if (kem_keygen(pk, &pl, sk, &sl) != 0 || sl > skn || pl > pkn) return 10;
  if (!strcmp(op, "enc")) {
    CT_BEGIN(); rc = kem_enc(pk, pl, ss, &ssl, ct, &cl); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(ct, cl <= ctn ? cl : ctn);
    return rc != 0;
  }
  if (kem_enc(pk, pl, ss, &ssl, ct, &cl) != 0 || cl > ctn) return 10;
  if (!strcmp(op, "dec")) {
    ssl = ssn;
    ct_secret_key(sk, sl, pk, pl);
    CT_BEGIN(); rc = kem_dec(sk, sl, ct, cl, ss, &ssl); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    return rc != 0;
  }
  return 2;
}
"#;

const ICCS_KEX: &str = r#"
ull kex_get_passes_num(void); ull kex_get_pk_len_bytes(void); ull kex_get_sk_len_bytes(void);
ull kex_get_sta_len_bytes(void); ull kex_get_stb_len_bytes(void); ull kex_get_ss_len_bytes(void);
ull kex_get_total_msg_len_bytes(void);
int kex_init_a(uc *pk, ull *pk_len, uc *sk, ull *sk_len, uc *st, ull *st_len);
int kex_init_b(uc *pk, ull *pk_len, uc *sk, ull *sk_len, uc *st, ull *st_len);
int kex_generate_pass1_msg_a(uc *sk, ull sk_len, uc *pk, ull pk_len, uc *st, ull *st_len, uc *m, ull *m_len);
typedef int (*ct_pass_fn)(uc *, ull, uc *, ull, uc *, ull, uc *, ull *, uc *, ull *);
int kex_derive_ss_a(uc *sk, ull sk_len, uc *pk, ull pk_len, uc *m, ull m_len, uc *st, ull st_len, uc *ss, ull *ss_len);
int kex_derive_ss_b(uc *sk, ull sk_len, uc *pk, ull pk_len, uc *m, ull m_len, uc *st, ull st_len, uc *ss, ull *ss_len);
#define CT_PASS(k, s) int kex_generate_pass##k##_msg_##s(uc *, ull, uc *, ull, uc *, ull, uc *, ull *, uc *, ull *) __attribute__((weak));
CT_PASS(2, b) CT_PASS(3, a) CT_PASS(4, b) CT_PASS(5, a) CT_PASS(6, b) CT_PASS(7, a) CT_PASS(8, b)
CT_PASS(9, a) CT_PASS(10, b) CT_PASS(11, a) CT_PASS(12, b) CT_PASS(13, a) CT_PASS(14, b)
CT_PASS(15, a) CT_PASS(16, b)
static ct_pass_fn ct_pass(int k) {
  switch (k) {
  case 2: return kex_generate_pass2_msg_b; case 3: return kex_generate_pass3_msg_a;
  case 4: return kex_generate_pass4_msg_b; case 5: return kex_generate_pass5_msg_a;
  case 6: return kex_generate_pass6_msg_b; case 7: return kex_generate_pass7_msg_a;
  case 8: return kex_generate_pass8_msg_b; case 9: return kex_generate_pass9_msg_a;
  case 10: return kex_generate_pass10_msg_b; case 11: return kex_generate_pass11_msg_a;
  case 12: return kex_generate_pass12_msg_b; case 13: return kex_generate_pass13_msg_a;
  case 14: return kex_generate_pass14_msg_b; case 15: return kex_generate_pass15_msg_a;
  case 16: return kex_generate_pass16_msg_b; default: return 0;
  }
}
static int ct_run(const char *op) {
  ull pkn = kex_get_pk_len_bytes(), skn = kex_get_sk_len_bytes(), san = kex_get_sta_len_bytes();
  ull sbn = kex_get_stb_len_bytes(), ssn = kex_get_ss_len_bytes(), mn = kex_get_total_msg_len_bytes();
  uc *pka = ct_alloc(pkn), *ska = ct_alloc(skn), *sta = ct_alloc(san), *ssa = ct_alloc(ssn);
  uc *pkb = ct_alloc(pkn), *skb = ct_alloc(skn), *stb = ct_alloc(sbn), *ssb = ct_alloc(ssn);
  uc *msg[17];
  ull ml[17] = {0};
  ull pal = pkn, sal = skn, tal = san, pbl = pkn, sbl = skn, tbl = sbn, l1, l2;
  int rc, k, run = 0;
  for (k = 0; k <= 16; k++) msg[k] = ct_alloc(mn);
  if (!strcmp(op, "init_a")) {
    CT_BEGIN(); rc = kex_init_a(pka, &pal, ska, &sal, sta, &tal); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(pka, pal <= pkn ? pal : pkn);
    return rc != 0;
  }
  if (!strcmp(op, "init_b")) {
    CT_BEGIN(); rc = kex_init_b(pkb, &pbl, skb, &sbl, stb, &tbl); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(pkb, pbl <= pkn ? pbl : pkn);
    return rc != 0;
  }
  if (strcmp(op, "exchange")) return 2;
  if (kex_init_a(pka, &pal, ska, &sal, sta, &tal) != 0) return 10;
  if (kex_init_b(pkb, &pbl, skb, &sbl, stb, &tbl) != 0) return 10;
  if (sal > skn || sbl > skn || tal > san || tbl > sbn || pal > pkn || pbl > pkn) return 10;
  CT_SECRET(ska, skn); CT_SECRET(skb, skn); CT_SECRET(sta, san); CT_SECRET(stb, sbn);
  for (k = 1; k <= 16; k++) {
    ull *tl = (k % 2) ? &tal : &tbl;
    ml[k] = 0;
    if (k == 1) {
      CT_BEGIN(); rc = kex_generate_pass1_msg_a(ska, sal, pkb, pbl, sta, tl, msg[1], &ml[1]); CT_END();
    } else {
      ct_pass_fn f = ct_pass(k);
      if (!f) break;
      uc *sk = (k % 2) ? ska : skb, *pk = (k % 2) ? pkb : pka;
      ull skl = (k % 2) ? sal : sbl, pkl = (k % 2) ? pbl : pal;
      CT_BEGIN(); rc = f(sk, skl, pk, pkl, msg[k - 1], ml[k - 1], (k % 2) ? sta : stb, tl, msg[k], &ml[k]); CT_END();
    }
    CT_PUBLIC(&rc, sizeof rc); CT_PUBLIC(&ml[k], sizeof ml[k]); CT_PUBLIC(tl, sizeof *tl);
    if (rc < 0 || ml[k] > mn) return 1;
    CT_PUBLIC(msg[k], mn);
    CT_OUT(msg[k], ml[k]);
    run = k;
    if (rc == 1) break;
  }
  int lb = 0, la = 0;
  for (k = run; k >= 1; k--) { if (k % 2 == 0 && !lb) lb = k; if (k % 2 == 1 && !la) la = k; }
  l1 = ssn; l2 = ssn;
  CT_BEGIN();
  rc = kex_derive_ss_a(ska, sal, pkb, pbl, lb ? msg[lb] : NULL, lb ? ml[lb] : 0, sta, tal, ssa, &l1);
  rc |= kex_derive_ss_b(skb, sbl, pka, pal, la ? msg[la] : NULL, la ? ml[la] : 0, stb, tbl, ssb, &l2);
  CT_END();
  CT_PUBLIC(&rc, sizeof rc);
  return rc != 0;
}
"#;

fn nist_sign(ns: &str, n: &NistApi) -> String {
    let sig = n.sig_bytes.unwrap_or(0);
    let (proto, call) = if n.ctx {
        (
            format!(
                "int {ns}_crypto_sign_signature_ctx(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen, const uint8_t *ctx, size_t ctxlen, const uint8_t *sk);"
            ),
            format!("{ns}_crypto_sign_signature_ctx(sig, &siglen, m, sizeof m, m, 0, sk)"),
        )
    } else {
        (
            format!(
                "int {ns}_crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen, const uint8_t *sk);"
            ),
            format!("{ns}_crypto_sign_signature(sig, &siglen, m, sizeof m, sk)"),
        )
    };
    format!(
        r#"
int {ns}_crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
{proto}
static int ct_run(const char *op) {{
  uc *pk = ct_alloc({pk}), *sk = ct_alloc({sk}), *sig = ct_alloc({sig} + 4096), m[32];
  size_t siglen = {sig};
  int rc;
  ct_fill(m, sizeof m, 64);
  if (!strcmp(op, "keygen")) {{
    CT_BEGIN(); rc = {ns}_crypto_sign_keypair(pk, sk); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(pk, {pk});
    return rc != 0;
  }}
  if ({ns}_crypto_sign_keypair(pk, sk) != 0) return 10;
  if (!strcmp(op, "sign")) {{
    ct_secret_key(sk, {sk}, pk, {pk});
    CT_BEGIN(); rc = {call}; CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(sig, siglen <= {sig} + 4096 ? siglen : {sig} + 4096);
    return rc != 0;
  }}
  return 2;
}}
"#,
        pk = n.pk_bytes,
        sk = n.sk_bytes,
    )
}

fn nist_kem(ns: &str, n: &NistApi) -> String {
    format!(
        r#"
int {ns}_crypto_kem_keypair(uint8_t *pk, uint8_t *sk);
int {ns}_crypto_kem_enc(uint8_t *ct, uint8_t *ss, const uint8_t *pk);
int {ns}_crypto_kem_dec(uint8_t *ss, const uint8_t *ct, const uint8_t *sk);
static int ct_run(const char *op) {{
  uc *pk = ct_alloc({pk}), *sk = ct_alloc({sk}), *ct = ct_alloc({ct}), *ss = ct_alloc({ss});
  int rc;
  if (!strcmp(op, "keygen")) {{
    CT_BEGIN(); rc = {ns}_crypto_kem_keypair(pk, sk); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(pk, {pk});
    return rc != 0;
  }}
  if ({ns}_crypto_kem_keypair(pk, sk) != 0) return 10;
  if (!strcmp(op, "enc")) {{
    CT_BEGIN(); rc = {ns}_crypto_kem_enc(ct, ss, pk); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    CT_OUT(ct, {ct});
    return rc != 0;
  }}
  if ({ns}_crypto_kem_enc(ct, ss, pk) != 0) return 10;
  if (!strcmp(op, "dec")) {{
    ct_secret_key(sk, {sk}, pk, {pk});
    CT_BEGIN(); rc = {ns}_crypto_kem_dec(ss, ct, sk); CT_END();
    CT_PUBLIC(&rc, sizeof rc);
    return rc != 0;
  }}
  return 2;
}}
"#,
        pk = n.pk_bytes,
        sk = n.sk_bytes,
        ct = n.ct_bytes.unwrap_or(0),
        ss = n.ss_bytes.unwrap_or(0),
    )
}

/// Shortest draw that counts as published when found verbatim in the public output (a
/// shorter one matches by chance too often).
pub const MIN_PUBLIC_DRAW: usize = 16;

/// What a first pass reported: draws (in order), public outputs, and the secret key with the
/// public key when the operation takes a secret key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    /// The generator's draws, in the order the operation made them.
    pub draws: Vec<Vec<u8>>,
    /// The operation's public outputs (public key, signature, ciphertext, message).
    pub outputs: Vec<Vec<u8>>,
    /// The secret key the operation took, if it takes one.
    pub secret_key: Option<Vec<u8>>,
    /// The public key of that key pair, if the operation takes a secret key.
    pub public_key: Option<Vec<u8>>,
}

impl Probe {
    /// Parses the first pass's records (`D`/`O`, u32 index, u32 length, bytes).
    pub fn parse(bytes: &[u8]) -> Result<Probe, String> {
        let mut p = Probe::default();
        let mut rest = bytes;
        while !rest.is_empty() {
            if rest.len() < 9 {
                return Err("first pass: truncated record".into());
            }
            let kind = rest[0];
            let len = u32::from_le_bytes([rest[5], rest[6], rest[7], rest[8]]) as usize;
            let body = rest
                .get(9..9 + len)
                .ok_or("first pass: truncated record")?
                .to_vec();
            match kind {
                b'D' => p.draws.push(body),
                b'O' => p.outputs.push(body),
                b'K' => p.secret_key = Some(body),
                b'P' => p.public_key = Some(body),
                k => return Err(format!("first pass: unknown record kind {k}")),
            }
            rest = &rest[9 + len..];
        }
        Ok(p)
    }

    /// Indices of the draws of at least [`MIN_PUBLIC_DRAW`] bytes found verbatim in a public
    /// output.
    pub fn public_draws(&self) -> Vec<usize> {
        self.draws
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                d.len() >= MIN_PUBLIC_DRAW
                    && self
                        .outputs
                        .iter()
                        .any(|o| o.windows(d.len()).any(|w| w == d.as_slice()))
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Ranges (offset, length) of the secret key, each at least [`MIN_PUBLIC_DRAW`] bytes,
    /// that appear verbatim in the public key (a public seed or the public key itself kept
    /// in the secret key), in order and without overlap.
    pub fn public_key_ranges(&self) -> Vec<(usize, usize)> {
        let (Some(sk), Some(pk)) = (&self.secret_key, &self.public_key) else {
            return Vec::new();
        };
        let w = MIN_PUBLIC_DRAW;
        if sk.len() < w || pk.len() < w {
            return Vec::new();
        }
        let mut at: std::collections::HashMap<&[u8], Vec<usize>> = Default::default();
        for (j, win) in pk.windows(w).enumerate() {
            at.entry(win).or_default().push(j);
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i + w <= sk.len() {
            let best = at
                .get(&sk[i..i + w])
                .into_iter()
                .flatten()
                .map(|&j| {
                    sk[i..]
                        .iter()
                        .zip(&pk[j..])
                        .take_while(|(a, b)| a == b)
                        .count()
                })
                .max();
            match best {
                Some(len) => {
                    out.push((i, len));
                    i += len;
                }
                None => i += 1,
            }
        }
        out
    }
}

/// C source of the driver for an instance; `None` for kinds without secret inputs (hash)
/// or a NIST instance without its API description.
pub fn driver_source(kind: Category, api: ApiKind, nist: Option<&NistApi>) -> Option<String> {
    let body = match (api, kind) {
        (_, Category::Hash) => return None,
        (ApiKind::Iccs, Category::Sign) => ICCS_SIGN.to_string(),
        (ApiKind::Iccs, Category::Kem) => ICCS_KEM.to_string(),
        (ApiKind::Iccs, Category::Kex) => ICCS_KEX.to_string(),
        (ApiKind::Nist, Category::Sign) => nist_sign(&nist?.namespace, nist?),
        (ApiKind::Nist, Category::Kem) => nist_kem(&nist?.namespace, nist?),
        (ApiKind::Nist, Category::Kex) => return None,
    };
    let rng = match api {
        ApiKind::Iccs => ICCS_RNG,
        ApiKind::Nist => NIST_RNG,
    };
    Some(format!("{PRELUDE}{rng}{body}{MAIN}"))
}

/// Linker options wrapping the generator of the API.
pub fn wrap_flags(api: ApiKind) -> Vec<String> {
    match api {
        ApiKind::Iccs => vec!["-Wl,--wrap=get_random_number".into()],
        ApiKind::Nist => vec!["-Wl,--wrap=PQCLEAN_randombytes".into()],
    }
}

/// Driver of the ICCS helper check: each operation feeds undefined input to one helper of
/// the provider library (DRNG seed, `sm3hash`/`pseudohash`/`pseudoXOF` message).
pub const HELPERS_SOURCE: &str = r#"/* pqperf constant-time check of the ICCS helpers (generated). */
#include <stdint.h>
#include <string.h>
#include <valgrind/memcheck.h>
typedef unsigned char uc;
typedef unsigned long long ull;
int init_random_number(void *drng, const uc *seed, ull seed_len);
int get_random_number(void *drng, uc *out, ull bits);
int sm3hash(int digest_len, const uc *msg, ull msg_len, uc *digest);
int pseudohash(int digest_len, const uc *msg, ull msg_len, uc *digest);
int pseudoXOF(ull output_len, const uc *msg, ull msg_len, uc *output);
static uc ctx[3 * 55], in[200], out[256];
int main(int argc, char **argv) {
  int rc = -1;
  VALGRIND_DISABLE_ERROR_REPORTING;
  if (argc != 2) return 2;
  for (unsigned i = 0; i < sizeof in; i++) in[i] = (uc)(i * 131u + 5);
  VALGRIND_MAKE_MEM_UNDEFINED(in, sizeof in);
  VALGRIND_ENABLE_ERROR_REPORTING;
  if (!strcmp(argv[1], "drng")) {
    rc = init_random_number(ctx, in, 64);
    rc |= get_random_number(ctx, out, 8 * sizeof out);
    rc |= get_random_number(ctx, out, 1000);
  } else if (!strcmp(argv[1], "sm3hash")) {
    rc = sm3hash(256, in, 8 * 150, out) | sm3hash(256, in, 8 * 64 - 3, out);
  } else if (!strcmp(argv[1], "pseudohash")) {
    rc = pseudohash(512, in, 8 * 150, out) | pseudohash(1024, in, 8 * 33, out);
  } else if (!strcmp(argv[1], "pseudoXOF")) {
    rc = pseudoXOF(8 * 200 - 5, in, 8 * 150, out) | pseudoXOF(256, in, 8 * 7, out);
  } else {
    VALGRIND_DISABLE_ERROR_REPORTING;
    return 2;
  }
  VALGRIND_DISABLE_ERROR_REPORTING;
  VALGRIND_MAKE_MEM_DEFINED(&rc, sizeof rc);
  return rc != 0;
}
"#;

/// Helper operations of [`HELPERS_SOURCE`].
pub const HELPER_OPS: &[&str] = &["drng", "sm3hash", "pseudohash", "pseudoXOF"];
