//! Every test vector of iccs-api-and-kat.md §1.7 and §2.3, the GB/T 32905 examples, and the
//! NIST CTR DRBG / HQC generator first-KAT-seed values.

use pqperf_iccs::{Drng, IccsError, NistDrbg, pseudohash, pseudoxof, sm3hash};

fn m(n: usize) -> Vec<u8> {
    (0..n).map(|i| ((7 * i + 1) % 256) as u8).collect()
}

fn ph(d: i32, msg: &[u8], bits: u64) -> String {
    let mut out = [0u8; 128];
    let n = pseudohash(d, msg, bits, &mut out).unwrap();
    hex::encode(&out[..n])
}

fn px(n: u64, msg: &[u8], bits: u64) -> String {
    let mut out = vec![0u8; 1 + n as usize / 8];
    let k = pseudoxof(n, msg, bits, &mut out).unwrap();
    hex::encode(&out[..k])
}

#[test]
fn gbt_32905_examples() {
    assert_eq!(
        hex::encode(sm3hash(256, b"abc", 24).unwrap()),
        "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
    );
    assert_eq!(
        hex::encode(sm3hash(256, &b"abcd".repeat(16), 512).unwrap()),
        "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732"
    );
}

#[test]
fn sm3hash_spec_vectors() {
    let s = |m: &[u8], b| hex::encode(sm3hash(256, m, b).unwrap());
    assert_eq!(
        s(b"", 0),
        "1ab21d8355cfa17f8e61194831e81a8f22bec8c728fefb747ed035eb5082aa2b"
    );
    let one = "985ffe9568be96328729b1c16631e9328d356432413d7556a646b9eefe479b9e";
    assert_eq!(s(&[0x80], 1), one);
    assert_eq!(s(&[0xFF], 1), one);
    assert_eq!(
        s(b"abc", 20),
        "3c67c85bc057fee93dd958542b6abbe5c49b689811ddbf4e8639e2dc495dafbd"
    );
    let m64 = m(64);
    assert_eq!(
        s(&m64, 447),
        "733a5275bbdddd3da17d20eb9ca05309bcdb8b6f168137098c870015883d6143"
    );
    assert_eq!(
        s(&m64, 449),
        "9cd3e74fec55ccbfc6a18aecc6b08f6affcc318fa44b7bf6191665d96fa2fdbd"
    );
    assert_eq!(
        s(&m64, 511),
        "bc07765d31413235e1c0ce233c44df81200a00ea30c004890245f71d8a11085c"
    );
}

#[test]
fn hmac_key_derivation() {
    let mut k = [0u8; 64];
    k[..32].copy_from_slice(&sm3hash(256, b"3.14159265358979", 128).unwrap());
    k[32..].copy_from_slice(&sm3hash(256, b"2.71828182845904", 128).unwrap());
    assert_eq!(k, pqperf_iccs::HMAC_KEY);
}

#[test]
fn pseudohash_spec_vectors() {
    assert_eq!(
        ph(512, b"abc", 24),
        "9ae35811886caf801bfc6089ffb7c0a0fbeb8ebd14a5261f28474d7a5814970a865ef8ace55461c19e953e9d36a560994b126366bbb2942eb6818523e82f1e95"
    );
    assert_eq!(
        ph(768, b"abc", 24),
        "679c6d5b28ba35b92ce4e944db29e36b8ad3a008fa75a6eca2ffd4a400f4e35d2c503806d66cc94d12af7eb0b21580db8e5258c18ef38936fba3372bde4e37a357f3d3dd9f6a6456094173cc0ebfd661dbb0a2a7c0f1638f75082cbbfcd34b0f"
    );
    assert_eq!(
        ph(1024, b"abc", 24),
        "7710420aa9c2dbae8520c0408bd6d65402f3db9b6737590f086693651ad279756c280980b925e2e7d2bdc76fb9b67fc55a438752faf8137250ed127a6945860fd289156c58c72a27d661a8431519562c625d2cf7288fc643549d9c02f8ac5f157805edc50d92908fbb4ca255bdb1436c21ea963fa5f278efec64361775a5415c"
    );
    assert_eq!(
        ph(512, b"", 0),
        "958f69c7d26f0f69d6d674fc4b8ad58ca6f29a0037adf88884428e5d04c67be6833de1b616ff5c892224e5de7258d68a787a228edec5203d8cfb274022765541"
    );
    assert_eq!(
        ph(512, b"abc", 20),
        "f23630a19c74907f39bf91a4c36919c44b1bc03ace8d91e91bda8b479a3a463e0ceec0d2969c3c9f925722da43114fc117dca7ef49a0328fda0fd30748fde515"
    );
    assert_eq!(
        ph(512, &m(32), 256),
        "8b02e44715679a853a539bbfe5c6d8a0df2fe601418453a565804daa3705246fd9629eb6b9a0e9df76c8f5533af9551e6ec9c2d0ea3b7afd412ea13c375936a3"
    );
}

#[test]
fn pseudoxof_spec_vectors() {
    let k1 = "fe1ea80dac6f100c33537bd24619ec7c72a1e8b1ffeaefb1eb52a37791fdaf61";
    assert_eq!(px(256, b"abc", 24), k1);
    assert_eq!(
        px(512, b"abc", 24),
        format!("{k1}9db16c0ac7bebb47238c6cc925ff66af7936e278e12d2664502bb38b03fd41cb")
    );
    assert_eq!(px(100, b"abc", 24), "fe1ea80dac6f100c33537bd240");
    assert_eq!(
        px(256, b"", 0),
        "88c0cffa4c713446a03f1fff1630aa6353bdb53e2a9272146be7a82fde06afa3"
    );
    assert_eq!(
        px(256, b"abc", 20),
        "edb82f7bfc7305ef9ff75c50b2a4cb03a386201fe297f3834581a7bf9773e7de"
    );
    assert_eq!(
        px(256, &[0x80], 1),
        "ed9d309edee7360a873bc1e5e691a823d3432d1bb1aac55b538142f0de2cac17"
    );
    assert_eq!(
        px(256, &m(32), 256),
        "852eea2d7221581665ce9fabf701bb54035011620e94322be43c096668b34861"
    );
    // n = 0 writes nothing
    let mut out = [0xAAu8; 4];
    assert_eq!(pseudoxof(0, b"abc", 24, &mut out), Ok(0));
    assert_eq!(out, [0xAA; 4]);
}

#[test]
fn error_codes() {
    assert_eq!(sm3hash(512, b"abc", 24), Err(IccsError::DigestLength));
    assert_eq!(IccsError::DigestLength.code(), -4);
    let mut out = [0u8; 128];
    for d in [0, 256, 513, 2048, -512] {
        assert_eq!(
            pseudohash(d, b"abc", 24, &mut out),
            Err(IccsError::DigestLength)
        );
    }
    // buffers shorter than the stated lengths
    assert_eq!(sm3hash(256, b"ab", 24), Err(IccsError::InvalidArgument));
    assert_eq!(
        pseudohash(1024, b"abc", 24, &mut out[..127]),
        Err(IccsError::InvalidArgument)
    );
    assert_eq!(
        pseudoxof(257, b"abc", 24, &mut out[..32]),
        Err(IccsError::InvalidArgument)
    );
    let mut d = Drng::new(b"x");
    let before = d.clone();
    assert_eq!(
        d.generate(&mut out[..1], 9),
        Err(IccsError::InvalidArgument)
    );
    assert_eq!(d, before, "a refused request must not advance the state");
}

fn draw(d: &mut Drng, bits: u64) -> String {
    let mut out = vec![0u8; bits.div_ceil(8) as usize];
    d.generate(&mut out, bits).unwrap();
    hex::encode_upper(out)
}

#[test]
fn drng_kat_seed_sequence() {
    use sha2::Digest;
    let mut d = Drng::new(&b"seed".repeat(16));
    let ctx = d.ctx();
    assert_eq!(
        hex::encode_upper(ctx.v),
        "CA876FB92F7E49ED96704C96822E466DBA0ED05AC8893FB3F82DBADFA86B797C859E6B1408A6B677B2F768EF9AC7EC32F99EBDF428603E"
    );
    assert_eq!(
        hex::encode_upper(ctx.c),
        "0766634074BC87EABE8DFF1FE5BB219340AE044DDD3E4C99A7F9729F708AA42D817837DE5F6E2F6C523D52A98B1E573A23DDFB466047FA"
    );
    let mut seeds = Vec::new();
    for _ in 0..10 {
        seeds.push(draw(&mut d, 512));
        if seeds.len() == 1 {
            assert_eq!(
                hex::encode_upper(d.ctx().v),
                "D1EDD2F9A43AD1D854FE4BB667E96800FABCD4A8A5C78CDC50D8D8C45DDEBF0E2EE9B44BB767071CC8FFC9465E8D49E733B2923B1C3D08"
            );
        }
    }
    assert_eq!(
        seeds[0],
        "927F06B594798A4DDFAA4F03F92AAAF04E1D453F6ED1DE19B86D3AADE048A65483DF4754049B5CD3F586406CF2C64875C51EDB576DF342B5A970F40EABC15D3C"
    );
    assert_eq!(
        seeds[1],
        "58561187CBBF6CDC0ECFB2D25965F936BE05AA961542D0E23E4ADFA8B6D0E3FDC043ED72AC1C28F03CF831FBB6A8BC6DB9EE0475520EE8578B1970E407EE0352"
    );
    assert_eq!(
        seeds[2],
        "439838DD1F4B359C4D4BC2E19395DAF5007B3B682831FA554BFE3C8862E2987774EE95AC841FB3880239C0415B1D2AE696D4C419A250B1C215743DBC4A5E375D"
    );
    assert_eq!(
        seeds[9],
        "FC2B5EF7B166BB12528CDDE2F1E3C8FBA660C4D31F9009F5C2B63D6FAB9C692662D7AB31A0AE945168967EB9ED510156AA7E3549A122C21C8D0A431FC0BEBFA7"
    );
    let all: Vec<u8> = seeds.iter().flat_map(|s| hex::decode(s).unwrap()).collect();
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&all)),
        "817b754a4c817c473585ed32dda33f2dfb554e53a9a38b1026d0362df0648a93"
    );
}

#[test]
fn drng_message_sequence() {
    use sha2::Digest;
    let mut nonce = b"msg".repeat(21);
    nonce.push(b'm');
    let mut d = Drng::new(&nonce);
    let mut all = Vec::new();
    for i in 0..10u64 {
        let s = draw(&mut d, 8 * (56 + 8 * i));
        if i == 0 {
            assert_eq!(
                s,
                "EE402D1730D0117B9F51BE0672592FCEC438A2945A81F5D894B869DC863CCBF57E5C8E7766D74E27E965235CD91E5E30E5583167053E1014"
            );
        }
        if i == 1 {
            assert_eq!(
                s,
                "6DF5638F60C9EAF3BCE1FD75D0A5393F6F39081F9144EB9FFE7C1CFF856F0D837AA3875266C7DA4EDAAE698D03BCB00ED8135C427849A0FE07257A9E32E087E6"
            );
        }
        all.extend(hex::decode(s).unwrap());
    }
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&all)),
        "ee9ac10e13fbe7f0037225ead06935ea9a2424bd45328e849755f39114a0ed63"
    );
}

#[test]
fn drng_perf_seed_and_zero_bit_draws() {
    let seed: Vec<u8> = (0..48).collect();
    assert_eq!(
        draw(&mut Drng::new(&seed), 256),
        "B569718FC1F1F82A4C0ACF90FF4AC10966E11E3750012597BB7ECFD357C962AA"
    );
    assert_eq!(draw(&mut Drng::new(&seed), 13), "B568");
    let mut d = Drng::new(&seed);
    assert_eq!(draw(&mut d, 0), "");
    assert_eq!(
        draw(&mut d, 256),
        "6A0B45B7F8FC88D63CCE4EA82B79C3857E6A6804B069368FE4EE382ECFACDAF9"
    );
    assert_eq!(
        draw(&mut Drng::new(b""), 256),
        "FCADF1DBF3E2E9349584522373C9D1E331D11E06FB72404B17453E1961601ED4"
    );
    // every call advances: one 512-bit draw differs from two 256-bit draws
    let mut a = Drng::new(&seed);
    let mut b = Drng::new(&seed);
    let one = draw(&mut a, 512);
    let two = draw(&mut b, 256) + &draw(&mut b, 256);
    assert_eq!(one[..64], two[..64]);
    assert_ne!(one[64..], two[64..]);
}

/// PQClean nistkat: init with entropy 00..2f, then `randombytes(seed, 48)` gives the
/// `seed = ` line of `count = 0` (the same value NIST's PQCgenKAT prints first).
#[test]
fn nist_drbg_first_kat_seed() {
    let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
    let mut d = NistDrbg::new(&entropy, None);
    let mut seed = [0u8; 48];
    d.fill(&mut seed);
    assert_eq!(
        hex::encode_upper(seed),
        "061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7056A8C266F9EF97ED08541DBD2E1FFA1"
    );
}
