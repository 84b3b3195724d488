//! Function classes from callgrind's function and object names: the symmetric primitives
//! (Keccak/SHAKE, SHA-2, SM3, AES), the ICCS helpers (`sm3hash`, `pseudohash`, `pseudoXOF`),
//! the DRNG, the C library, and the candidate's own code (everything else). Names are split
//! into lower-case words at every character that is not a letter or digit, so `aes` matches
//! `aes256_ecb` and `PQCLEAN_AES_ctr` but not `caesar`.

/// The ICCS helper entry points (class `iccs-helpers`).
const ICCS_HELPERS: &[&str] = &["sm3hash", "pseudohash", "pseudoXOF"];

/// Words (or word prefixes, `*`) of the DRNG: the ICCS DRNG, NIST's `randombytes` and its
/// AES-256 CTR DRBG, pqperf's shims.
const DRNG: &[&str] = &[
    "randombytes",
    "get*random*number",
    "init*random*number",
    "ngcc*random",
    "ngcc*seed",
    "drbg*",
    "drng*",
    "ctr*drbg*",
];

fn words(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Whether the name's words match `pat` (words joined by `*`; a trailing `*` makes the last
/// one a prefix): `get*random*number` matches `get_random_number`.
fn matches(ws: &[String], pat: &str) -> bool {
    let parts: Vec<&str> = pat.split('*').filter(|p| !p.is_empty()).collect();
    let prefix = pat.ends_with('*');
    let n = parts.len();
    if n == 0 || ws.len() < n {
        return false;
    }
    (0..=ws.len() - n).any(|s| {
        parts.iter().enumerate().all(|(k, p)| {
            let w = &ws[s + k];
            if k + 1 == n && prefix {
                w.starts_with(p)
            } else {
                w == p
            }
        })
    })
}

fn any_word(ws: &[String], f: impl Fn(&str) -> bool) -> bool {
    ws.iter().any(|w| f(w))
}

/// The class of function `name` in object `object` (one of `pqperf_model::count::CLASSES`).
pub fn classify(name: &str, object: &str) -> &'static str {
    if ICCS_HELPERS.contains(&name) {
        return "iccs-helpers";
    }
    let ws = words(name);
    // pqperf's own ICCS helper build (`pqperf_iccs…::auxfunc::pseudoxof_core`).
    if any_word(&ws, |w| matches!(w, "pseudoxof" | "pseudohash" | "auxfunc")) {
        return "iccs-helpers";
    }
    if DRNG.iter().any(|p| matches(&ws, p)) {
        return "drng";
    }
    if any_word(&ws, |w| {
        w.contains("keccak") || w.starts_with("shake") || w.starts_with("sha3") || w == "fips202"
    }) {
        return "keccak/shake";
    }
    if any_word(&ws, |w| {
        w.starts_with("sha256")
            || w.starts_with("sha512")
            || w.starts_with("sha224")
            || w.starts_with("sha384")
            || w == "sha2"
            || w.starts_with("sha2x")
    }) {
        return "sha-2";
    }
    if any_word(&ws, |w| w.starts_with("sm3")) {
        return "sm3";
    }
    if any_word(&ws, |w| {
        w.starts_with("aes") || w.contains("rijndael") || w.starts_with("aesenc")
    }) {
        return "aes";
    }
    let obj = object.rsplit('/').next().unwrap_or(object);
    if obj.starts_with("libc.so") || obj.starts_with("libc-") || obj.starts_with("ld-linux") {
        return "libc";
    }
    "candidate"
}

#[cfg(test)]
mod tests {
    use super::classify;

    #[test]
    fn names_fall_into_their_classes() {
        let lib = "./lib/sign-90/libX.so";
        for (name, class) in [
            ("PQCLEAN_MLKEM512_CLEAN_shake128_absorb", "keccak/shake"),
            ("KeccakF1600_StatePermute", "keccak/shake"),
            ("PQCLEAN_MLDSA44_CLEAN_sha3_256", "keccak/shake"),
            ("crypto_hashblocks_sha256", "sha-2"),
            ("sha512_inc_finalize", "sha-2"),
            ("pqperf_iccs::sm3::compress", "sm3"),
            ("sm3_update", "sm3"),
            ("sm3hash", "iccs-helpers"),
            ("pseudoXOF", "iccs-helpers"),
            ("pseudohash", "iccs-helpers"),
            (
                "pqperf_iccs_iccs_aux::auxfunc::pseudoxof_core",
                "iccs-helpers",
            ),
            ("get_random_number", "drng"),
            ("randombytes", "drng"),
            ("AES256_CTR_DRBG_Update", "drng"),
            ("pqperf_iccs::drng::HashDrbg::generate", "drng"),
            ("aes256_ecb", "aes"),
            ("PQCLEAN_AES_ctr", "aes"),
            ("caesar_shift", "candidate"),
            ("poly_ntt", "candidate"),
            ("sig_sign", "candidate"),
            ("PQCLEAN_MLKEM512_CLEAN_crypto_kem_enc", "candidate"),
        ] {
            assert_eq!(classify(name, lib), class, "{name}");
        }
        assert_eq!(
            classify(
                "__memcpy_avx_unaligned_erms",
                "/usr/lib/x86_64-linux-gnu/libc.so.6"
            ),
            "libc"
        );
        assert_eq!(classify("memcpy", lib), "candidate");
        // The helpers' names are exact: a candidate's own `my_sm3hash` is SM3 work.
        assert_eq!(classify("my_sm3hash", lib), "sm3");
    }
}
