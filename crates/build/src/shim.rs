//! The harness shim compiled into every candidate library, and the linker version script.
//!
//! ICCS libraries get the reference link interface (spec §3.7): `drng_algorithm` (unless the
//! candidate defines it), `ngcc_seed`, `ngcc_random`, `ngcc_build_flags` and the `ngcc_meta`
//! block (ABI 1). NIST libraries get `pqperf_nist_seed` / `pqperf_nist_random` over the
//! provider's `nist_kat_init` / `hqc_kat_init` and `PQCLEAN_randombytes`, plus
//! `ngcc_build_flags`. The version script exports only the API of the kind.

use pqperf_model::catalog::{ApiKind, NistRng};
use pqperf_model::vocab::Category;

/// What the shim needs to know about an instance.
pub struct ShimInfo<'a> {
    /// Candidate type.
    pub kind: Category,
    /// C API.
    pub api: ApiKind,
    /// Candidate id.
    pub id: &'a str,
    /// Algorithm name.
    pub algorithm: &'a str,
    /// Instance name.
    pub instance: &'a str,
    /// `Reference_Implementation` / `Optimized_Implementation`.
    pub variant: &'a str,
    /// Source folder.
    pub source_dir: &'a str,
    /// Compiler.
    pub compiler: &'a str,
    /// Build flags.
    pub build_flags: &'a str,
    /// The submission defines the DRNG itself (the shim does not provide it).
    pub no_drng: bool,
    /// KAT RNG of a NIST instance.
    pub rng: NistRng,
    /// ICCS instance header included by the shim of hash instances (`DIGEST_BIT_LENGTH`).
    pub header: Option<&'a str>,
}

/// A C string literal (ASCII-escaped).
pub fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// The size getters of a type, in metadata order, and the metadata type code.
fn size_getters(kind: Category) -> (u32, &'static [&'static str]) {
    match kind {
        Category::Kem => (
            1,
            &[
                "kem_get_pk_len_bytes",
                "kem_get_sk_len_bytes",
                "kem_get_ct_len_bytes",
                "kem_get_ss_len_bytes",
            ],
        ),
        Category::Sign => (
            2,
            &[
                "sig_get_pk_len_bytes",
                "sig_get_sk_len_bytes",
                "sig_get_sn_len_bytes",
            ],
        ),
        Category::Kex => (
            3,
            &[
                "kex_get_passes_num",
                "kex_get_pk_len_bytes",
                "kex_get_sk_len_bytes",
                "kex_get_sta_len_bytes",
                "kex_get_stb_len_bytes",
                "kex_get_ss_len_bytes",
                "kex_get_total_msg_len_bytes",
            ],
        ),
        Category::Hash => (4, &[]),
    }
}

/// C source of the shim.
pub fn shim_source(info: &ShimInfo<'_>) -> String {
    let mut s = String::new();
    s.push_str("/* pqperf harness shim (generated). */\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n");
    s.push_str(&format!(
        "static const char pqperf_build_flags[] = {};\nconst char *ngcc_build_flags(void);\nconst char *ngcc_build_flags(void) {{ return pqperf_build_flags; }}\n",
        c_string(info.build_flags)
    ));
    match info.api {
        ApiKind::Nist => {
            s.push_str("int PQCLEAN_randombytes(uint8_t *output, size_t n);\n");
            s.push_str("int pqperf_nist_seed(const uint8_t *entropy);\nint pqperf_nist_random(uint8_t *out, size_t n);\n");
            match info.rng {
                NistRng::Nist => s.push_str(
                    "void nist_kat_init(uint8_t *entropy_input, const uint8_t *personalization_string, int security_strength);\n\
                     int pqperf_nist_seed(const uint8_t *entropy) {\n  uint8_t e[48];\n  memcpy(e, entropy, 48);\n  nist_kat_init(e, NULL, 256);\n  return 0;\n}\n",
                ),
                NistRng::Hqc => s.push_str(
                    "void hqc_kat_init(uint8_t *entropy_input, uint8_t *personalization_string, int security_strength);\n\
                     void hqc_kat_release(void);\nstatic int pqperf_hqc_live;\n\
                     int pqperf_nist_seed(const uint8_t *entropy) {\n  uint8_t e[48];\n  memcpy(e, entropy, 48);\n  if (pqperf_hqc_live) hqc_kat_release();\n  hqc_kat_init(e, NULL, 256);\n  pqperf_hqc_live = 1;\n  return 0;\n}\n",
                ),
            }
            s.push_str("int pqperf_nist_random(uint8_t *out, size_t n) { return PQCLEAN_randombytes(out, n); }\n");
        }
        ApiKind::Iccs => {
            if let (Category::Hash, Some(h)) = (info.kind, info.header) {
                s.push_str(&format!("#include {}\n", c_string(h)));
            }
            s.push_str("#include \"drng.h\"\n");
            if info.no_drng {
                s.push_str("extern DRNG_ctx drng_algorithm;\n");
            } else {
                s.push_str("DRNG_ctx drng_algorithm;\n");
            }
            s.push_str(
                "int ngcc_seed(const unsigned char *seed, unsigned long long len);\n\
                 int ngcc_random(unsigned char *out, unsigned long long bits);\n\
                 int ngcc_seed(const unsigned char *seed, unsigned long long len) { return init_random_number(&drng_algorithm, seed, len); }\n\
                 int ngcc_random(unsigned char *out, unsigned long long bits) { return get_random_number(&drng_algorithm, out, bits); }\n",
            );
            let (code, getters) = size_getters(info.kind);
            for g in getters {
                s.push_str(&format!("unsigned long long {g}(void);\n"));
            }
            s.push_str(
                "typedef struct {\n  uint32_t magic, abi, type, struct_size;\n  char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64], build_flags[128];\n  uint64_t sizes[7];\n} ngcc_meta_t;\n\
                 static ngcc_meta_t pqperf_meta;\nstatic int pqperf_meta_done;\n\
                 static void pqperf_put(char *dst, size_t n, const char *src) { size_t l = strlen(src); if (l >= n) l = n - 1; memcpy(dst, src, l); dst[l] = 0; }\n\
                 const ngcc_meta_t *ngcc_meta(void);\nconst ngcc_meta_t *ngcc_meta(void) {\n  if (!pqperf_meta_done) {\n",
            );
            let nsizes = if info.kind == Category::Hash {
                2
            } else {
                getters.len()
            };
            s.push_str(&format!(
                "    pqperf_meta.magic = 0x4347474EU; pqperf_meta.abi = 1; pqperf_meta.type = {code}; pqperf_meta.struct_size = {};\n",
                640 + 8 * nsizes
            ));
            for (field, n, val) in [
                ("id", 16, info.id),
                ("algorithm", 64, info.algorithm),
                ("instance", 64, info.instance),
                ("variant", 32, info.variant),
                ("source_dir", 256, info.source_dir),
                ("compiler", 64, info.compiler),
                ("build_flags", 128, info.build_flags),
            ] {
                s.push_str(&format!(
                    "    pqperf_put(pqperf_meta.{field}, {n}, {});\n",
                    c_string(val)
                ));
            }
            if info.kind == Category::Hash {
                s.push_str("#ifdef DIGEST_BIT_LENGTH\n    pqperf_meta.sizes[0] = DIGEST_BIT_LENGTH; pqperf_meta.sizes[1] = DIGEST_BIT_LENGTH / 8;\n#endif\n");
            }
            for (i, g) in getters.iter().enumerate() {
                s.push_str(&format!("    pqperf_meta.sizes[{i}] = {g}();\n"));
            }
            s.push_str("    pqperf_meta_done = 1;\n  }\n  return &pqperf_meta;\n}\n");
        }
    }
    s
}

/// Symbols (or globs) a library of this kind exports.
pub fn exported_symbols(kind: Category, api: ApiKind, namespace: Option<&str>) -> Vec<String> {
    let mut v: Vec<String> = vec!["ngcc_build_flags".into()];
    match api {
        ApiKind::Nist => {
            v.push("pqperf_nist_seed".into());
            v.push("pqperf_nist_random".into());
            if let Some(ns) = namespace {
                v.push(format!("{ns}_crypto_*"));
            }
        }
        ApiKind::Iccs => {
            for s in [
                "ngcc_meta",
                "ngcc_seed",
                "ngcc_random",
                "drng_algorithm",
                "init_random_number",
                "get_random_number",
            ] {
                v.push(s.into());
            }
            let api: &[&str] = match kind {
                Category::Kem => &[
                    "kem_get_pk_len_bytes",
                    "kem_get_sk_len_bytes",
                    "kem_get_ss_len_bytes",
                    "kem_get_ct_len_bytes",
                    "kem_keygen",
                    "kem_enc",
                    "kem_dec",
                ],
                Category::Sign => &[
                    "sig_get_pk_len_bytes",
                    "sig_get_sk_len_bytes",
                    "sig_get_sn_len_bytes",
                    "sig_keygen",
                    "sig_sign",
                    "sig_verify",
                ],
                Category::Kex => &[
                    "kex_get_passes_num",
                    "kex_get_pk_len_bytes",
                    "kex_get_sk_len_bytes",
                    "kex_get_sta_len_bytes",
                    "kex_get_stb_len_bytes",
                    "kex_get_ss_len_bytes",
                    "kex_get_total_msg_len_bytes",
                    "kex_init_a",
                    "kex_init_b",
                    "kex_generate_pass*_msg_a",
                    "kex_generate_pass*_msg_b",
                    "kex_derive_ss_a",
                    "kex_derive_ss_b",
                ],
                Category::Hash => &["CryptHash"],
            };
            v.extend(api.iter().map(|s| s.to_string()));
        }
    }
    v
}

/// Linker version script exporting `symbols` (node `NGCC_1`), everything else local.
pub fn version_script(symbols: &[String]) -> String {
    let mut s = String::from("NGCC_1 {\n  global:\n");
    for sym in symbols {
        s.push_str(&format!("    {sym};\n"));
    }
    s.push_str("  local:\n    *;\n};\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_strings_escape() {
        assert_eq!(c_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(c_string("é"), "\"\\303\\251\"");
    }

    #[test]
    fn version_script_lists_api() {
        let syms = exported_symbols(Category::Sign, ApiKind::Iccs, None);
        let vs = version_script(&syms);
        assert!(vs.contains("    sig_verify;\n"));
        assert!(vs.contains("    drng_algorithm;\n"));
        assert!(vs.ends_with("  local:\n    *;\n};\n"));
        let n = exported_symbols(Category::Kem, ApiKind::Nist, Some("PQCLEAN_MLKEM512_CLEAN"));
        assert!(n.contains(&"PQCLEAN_MLKEM512_CLEAN_crypto_*".to_string()));
    }
}
