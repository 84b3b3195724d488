//! ICCS KAT_CryptHash: the hash KAT files, one per digest width (spec §4.3).

use super::*;

/// Which hash KAT files to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashFile {
    /// `KAT_2_12`: one record per message length 0 … 4096 bits.
    K2_12,
    /// `KAT_2_23`: three 2^23-bit messages (zeros, ones, DRNG output).
    K2_23,
    /// `KAT_2_33`: three 2^33-bit (1 GiB) messages.
    K2_33,
    /// `KAT_Loop`: 1,000,000 chained hashes.
    Loop,
}

impl HashFile {
    /// File-name prefix and DRNG seed word.
    pub fn word(self) -> &'static str {
        match self {
            HashFile::K2_12 => "KAT_2_12",
            HashFile::K2_23 => "KAT_2_23",
            HashFile::K2_33 => "KAT_2_33",
            HashFile::Loop => "KAT_Loop",
        }
    }
}

/// ICCS KAT_CryptHash, one file, digest width `d` bits.
pub fn kat_hash(
    lib: &Library,
    d: u32,
    file: HashFile,
    out: &mut String,
    t: &mut Timing,
) -> Result<(), Fail> {
    let api = HashApi::new(lib).map_err(|e| loadfail(e.to_string()))?;
    if d == 0 || !d.is_multiple_of(8) {
        return Err(loadfail(format!(
            "DIGEST_BIT_LENGTH {d} is not a positive multiple of 8"
        )));
    }
    let dl = (d / 8) as usize;
    let seed = file.word().as_bytes().repeat(8);
    let mut drng = DrngCtx::new(&seed);
    let h = |msg: &GuardedBuf, bits: u64, t: &mut Timing| -> Result<Vec<u8>, Fail> {
        let mut dig = GuardedBuf::new(dl);
        let rc = timed(t, "hash", || {
            api.hash(d, msg.as_slice(), bits, dig.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("CryptHash", &[("msg", msg), ("digest", &dig)])?;
        if rc != 0 {
            return Err(crypto(format!(
                "CryptHash returned {rc} for a {bits}-bit message"
            )));
        }
        Ok(dig.as_slice().to_vec())
    };
    match file {
        HashFile::K2_12 => {
            for b in 0..=4096u64 {
                let mut buf = vec![0u8; 512];
                drng.generate(&mut buf, b);
                let n = b.div_ceil(8) as usize;
                let msg = GuardedBuf::from_slice(&buf[..n]);
                let _ = writeln!(out, "Msg_Len = {b}");
                let _ = writeln!(out, "Msg = {}", hex_up(&buf[..n]));
                let dig = h(&msg, b, t)?;
                let _ = writeln!(out, "Dst_Len = {d}");
                let _ = writeln!(out, "Dst = {}", hex_up(&dig));
                out.push('\n');
            }
        }
        HashFile::K2_23 | HashFile::K2_33 => {
            let bits: u64 = if file == HashFile::K2_23 {
                1 << 23
            } else {
                1 << 33
            };
            let n = (bits / 8) as usize;
            for rec in 0..3 {
                let mut buf = match rec {
                    0 => vec![0u8; n],
                    1 => vec![0xFFu8; n],
                    _ => {
                        let mut v = vec![0u8; n];
                        drng.generate(&mut v, bits);
                        v
                    }
                };
                let _ = writeln!(out, "Msg_Len = {bits}");
                if rec == 2 {
                    let _ = writeln!(out, "Msg_Seed = {}", hex_up(&seed));
                } else {
                    let _ = writeln!(out, "Msg_Seed = ");
                }
                let _ = writeln!(
                    out,
                    "Msg_Exp = {} .... {}",
                    hex_up(&buf[..8]),
                    hex_up(&buf[n - 8..])
                );
                let msg = GuardedBuf::from_slice(&buf);
                buf.clear();
                let dig = h(&msg, bits, t)?;
                let _ = writeln!(out, "Dst_Len = {d}");
                let _ = writeln!(out, "Dst = {}", hex_up(&dig));
                out.push('\n');
            }
        }
        HashFile::Loop => {
            let mut m = vec![0u8; 1024];
            drng.generate(&mut m, 8192);
            let _ = writeln!(out, "Msg_Len = 8192");
            let _ = writeln!(out, "Msg = {}", hex_up(&m));
            let mut hcur = h(&GuardedBuf::from_slice(&m), 8192, t)?;
            for _ in 0..1_000_000u32 {
                m.rotate_left(dl);
                for (x, y) in m.iter_mut().zip(&hcur) {
                    *x ^= y;
                }
                let mut dig = vec![0u8; dl];
                let _ = api.hash(d, &m, 8192, &mut dig);
                hcur = dig;
            }
            let _ = writeln!(out, "Dst_Len = {d}");
            let _ = writeln!(out, "Dst = {}", hex_up(&hcur));
            out.push('\n');
        }
    }
    Ok(())
}
