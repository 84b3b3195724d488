//! Guard zones around the buffers handed to C ([`GuardedBuf`]), checked after each call.

/// Guard byte value (as the reference harness).
pub const GUARD_BYTE: u8 = 0xA5;
/// Guard bytes on each side of a buffer.
pub const GUARD_LEN: usize = 64;

/// A heap buffer of `len` usable bytes with [`GUARD_LEN`] bytes of [`GUARD_BYTE`] on each
/// side. Hand [`GuardedBuf::as_mut`] to the C call, then [`GuardedBuf::guards_intact`].
#[derive(Debug, Clone)]
pub struct GuardedBuf {
    raw: Vec<u8>,
    len: usize,
}

impl GuardedBuf {
    /// A zeroed buffer of `len` bytes between two guard zones.
    pub fn new(len: usize) -> GuardedBuf {
        let mut raw = vec![GUARD_BYTE; len + 2 * GUARD_LEN];
        raw[GUARD_LEN..GUARD_LEN + len].fill(0);
        GuardedBuf { raw, len }
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[u8]) -> GuardedBuf {
        let mut b = GuardedBuf::new(data.len());
        b.as_mut_slice().copy_from_slice(data);
        b
    }

    /// Usable length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the usable part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The usable bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.raw[GUARD_LEN..GUARD_LEN + self.len]
    }

    /// The usable bytes, mutable.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[GUARD_LEN..GUARD_LEN + self.len]
    }

    /// The first `n` usable bytes, mutable (`n` clamped to the length).
    pub fn prefix_mut(&mut self, n: usize) -> &mut [u8] {
        let n = n.min(self.len);
        &mut self.raw[GUARD_LEN..GUARD_LEN + n]
    }

    /// True if both guard zones still hold only [`GUARD_BYTE`].
    pub fn guards_intact(&self) -> bool {
        self.raw[..GUARD_LEN].iter().all(|&b| b == GUARD_BYTE)
            && self.raw[GUARD_LEN + self.len..]
                .iter()
                .all(|&b| b == GUARD_BYTE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_detects_overflow() {
        let mut g = GuardedBuf::new(8);
        assert!(g.guards_intact());
        g.as_mut_slice().fill(1);
        assert!(g.guards_intact());
        g.raw[GUARD_LEN + 8] = 0;
        assert!(!g.guards_intact());
    }
}
