//! The baseline self-test against the shared implementation (must pass for all 12 labels)
//! and against deliberately wrong libraries (must fail).

use pqperf_iccs::{pseudohash, pseudoxof, sm3hash};
use pqperf_iccs_capi::selftest::{self, MESSAGE_LENGTHS};
use pqperf_iccs_capi::{Helper, hash_instances};

/// `CryptHash` of a baseline instance, evaluated with the Rust API.
fn crypthash(helper: Helper, bits: u32, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    let r = match helper {
        Helper::Sm3hash => sm3hash(bits as i32, msg, msg_bits).map(|d| out.copy_from_slice(&d)),
        Helper::Pseudohash => pseudohash(bits as i32, msg, msg_bits, out).map(|_| ()),
        Helper::PseudoXof => pseudoxof(bits as u64, msg, msg_bits, out).map(|_| ()),
    };
    r.map_or_else(|e| e.code(), |()| 0)
}

#[test]
fn every_baseline_instance_passes() {
    for inst in hash_instances() {
        let t = selftest::run(&inst, "rust-api", |m, b, o| {
            crypthash(inst.helper, inst.digest_bits, m, b, o)
        });
        let extra = if inst.helper == Helper::Sm3hash { 2 } else { 0 };
        assert_eq!(t.total, MESSAGE_LENGTHS.len() + extra);
        assert!(t.passed, "{}", t.log);
        assert!(t.log.ends_with(&format!(
            "RESULT iccs {} PASS ({}/{})\n",
            inst.label, t.total, t.total
        )));
        assert!(t.log.starts_with(&format!(
            "instance = {}\nlibrary = rust-api\nmodel = ",
            inst.label
        )));
    }
    let sm3 = &hash_instances()[0];
    let t = selftest::run(sm3, "x", |m, b, o| crypthash(Helper::Sm3hash, 256, m, b, o));
    assert!(
        t.log
            .contains("ok   len=0 rc=0 1ab21d8355cfa17f8e61194831e81a8f...\n")
    );
    assert!(
        t.log
            .contains("ok   GB/T 32905 abc rc=0 66c7f0f462eeedd9d1f2d46bdc10e4e2...\n")
    );
}

#[test]
fn wrong_libraries_fail() {
    let insts = hash_instances();
    // pseudoXOF-512 answered by pseudohash-512: different construction
    let xof512 = insts.iter().find(|i| i.label == "pseudoXOF-512").unwrap();
    let t = selftest::run(xof512, "bad", |m, b, o| {
        crypthash(Helper::Pseudohash, 512, m, b, o)
    });
    assert!(!t.passed);
    assert_eq!(t.ok, 0);
    assert!(t.log.contains("FAIL len=0 rc=0 "));
    assert!(
        t.log
            .ends_with(&format!("RESULT iccs pseudoXOF-512 FAIL (0/{})\n", t.total))
    );
    // a library that only errs at one length
    let ph = insts.iter().find(|i| i.label == "pseudohash-768").unwrap();
    let t = selftest::run(ph, "flaky", |m, b, o| {
        if m.len() == 119 {
            -3
        } else {
            crypthash(Helper::Pseudohash, 768, m, b, o)
        }
    });
    assert!(!t.passed);
    assert_eq!(t.ok + 1, t.total);
    assert!(t.log.contains("FAIL len=119 rc=-3 "));
}
