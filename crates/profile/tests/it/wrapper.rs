//! wrap.c on a hand-made library: nested wrapped calls are executed but counted once,
//! disabled periods count nothing, results pass through unchanged, call shapes carry the
//! bit lengths, and the self-measured overhead is sane.

use std::path::Path;
use std::process::Command;

use pqperf_ffi::profile::Hashprof;
use pqperf_profile::wrapc;

fn gcc(dir: &Path, args: &[&str]) {
    let st = Command::new("gcc")
        .current_dir(dir)
        .args(args)
        .status()
        .unwrap();
    assert!(st.success(), "gcc {args:?}");
}

#[test]
fn nested_calls_are_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // x.c: a pseudoXOF that calls sm3hash (another object) once per 256-bit block.
    std::fs::write(
        d.join("x.c"),
        "int sm3hash(int d, const unsigned char *m, unsigned long long l, unsigned char *o);\n\
         int pseudoXOF(unsigned long long n, const unsigned char *m, unsigned long long l, unsigned char *o) {\n\
           unsigned long long i; for (i = 0; i < (n + 255) / 256; i++) sm3hash(256, m, l, o + 32 * i);\n\
           return 7; }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("y.c"),
        "int sm3hash(int d, const unsigned char *m, unsigned long long l, unsigned char *o) {\n\
           (void)m; o[0] = (unsigned char)(d + l); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("a.c"),
        "int pseudoXOF(unsigned long long n, const unsigned char *m, unsigned long long l, unsigned char *o);\n\
         int sm3hash(int d, const unsigned char *m, unsigned long long l, unsigned char *o);\n\
         unsigned long long sig_get_pk_len_bytes(void) { return 160; }\n\
         unsigned long long sig_get_sk_len_bytes(void) { return 16; }\n\
         unsigned long long sig_get_sn_len_bytes(void) { return 16; }\n\
         int sig_keygen(unsigned char *pk, unsigned long long *pl, unsigned char *sk, unsigned long long *sl) {\n\
           static const unsigned char m[8]; int r = pseudoXOF(1024, m, 64, pk);\n\
           r += sm3hash(256, m, 8, pk + 128); *pl = 160; *sl = 16; (void)sk; return r == 7 ? 0 : -1; }\n\
         int sig_sign(unsigned char *sk, unsigned long long skl, unsigned char *m, unsigned long long ml,\n\
           unsigned char *sn, unsigned long long *snl) { (void)sk; (void)skl; (void)m; (void)ml; (void)sn; *snl = 0; return 0; }\n\
         int sig_verify(unsigned char *pk, unsigned long long pkl, unsigned char *sn, unsigned long long snl,\n\
           unsigned char *m, unsigned long long ml) { (void)pk; (void)pkl; (void)sn; (void)snl; (void)m; (void)ml; return 0; }\n",
    )
    .unwrap();
    for f in ["x", "y", "a"] {
        gcc(
            d,
            &[
                "-O2",
                "-fPIC",
                "-c",
                &format!("{f}.c"),
                "-o",
                &format!("{f}.o"),
            ],
        );
    }
    let syms = vec!["pseudoXOF".to_string(), "sm3hash".to_string()];
    let w = wrapc::compile_wrap_object("gcc", d, &syms, &[]).unwrap();
    let mut args: Vec<String> = vec!["-shared".into(), "-o".into(), "libt.so".into()];
    args.push(w.display().to_string());
    args.extend(["a.o", "x.o", "y.o"].map(String::from));
    args.extend(wrapc::wrap_link_args(&syms));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    gcc(d, &a);

    let hp = Hashprof::open(&d.join("libt.so")).unwrap();
    assert!(["rdtsc", "cntvct_el0", "clock_gettime_ns"].contains(&hp.tick_source().as_str()));
    let lib = pqperf_ffi::dl::Library::open(&d.join("libt.so")).unwrap();
    let api = pqperf_ffi::dl::SigApi::new(&lib).unwrap();
    let (mut pk, mut sk) = (vec![0u8; 160], vec![0u8; 16]);
    // Disabled: executed (results unchanged) but not counted.
    hp.reset();
    let o = api.keygen(&mut pk, &mut sk).unwrap();
    assert_eq!(o.rc, 0, "pseudoXOF's own return value passes through");
    assert_eq!(pk[0], (256 + 64) as u8, "nested sm3hash still runs");
    assert_eq!(pk[128], (256 + 8) as u8);
    assert!(hp.entries().0.is_empty());
    // Enabled: pseudoXOF counted once per call (its 4 nested sm3hash calls are not), the
    // direct sm3hash call counted with its own shape.
    hp.enable(true);
    for _ in 0..3 {
        assert_eq!(api.keygen(&mut pk, &mut sk).unwrap().rc, 0);
    }
    hp.enable(false);
    let (e, overflow) = hp.entries();
    assert_eq!(overflow, 0);
    let shapes: Vec<(String, u64, u64, u64)> = e
        .iter()
        .map(|x| (x.func.clone(), x.in_bits, x.out_bits, x.calls))
        .collect();
    assert_eq!(
        shapes,
        vec![
            ("pseudoXOF".to_string(), 64, 1024, 3),
            ("sm3hash".to_string(), 8, 256, 3)
        ]
    );
    assert!(e.iter().all(|x| x.ticks > 0));
    let (outer, inner) = hp.overhead(10_000);
    assert!(
        outer.is_finite() && inner > 0.0 && inner < 100_000.0,
        "{outer} {inner}"
    );
}
