//! What the ledger keeps of the bytes imported from a file ([`Fingerprint`]), to tell a
//! file that grew from one that was rewritten, and the hash it is made of.

/// A 64-bit hash of a byte prefix, stable across builds (it is stored in the ledger).
/// Four independent lanes over 32-byte blocks, so the multiply chains overlap: it runs over
/// every imported byte, and one serial chain was a visible share of import time.
pub fn prefix_hash(bytes: &[u8]) -> i64 {
    let mut hash = PrefixHash::new(bytes.len());
    hash.update(bytes);
    hash.finish()
}

/// [`prefix_hash`] fed in parts, for a prefix too long to hold (a streamed file's check of
/// a fingerprint from before migration V11): its length is known at the start.
pub(crate) struct PrefixHash {
    lanes: [u64; 4],
    /// The bytes of an unfinished 32-byte block.
    pending: Vec<u8>,
}

const PREFIX_PRIME: u64 = 0x0000_0100_0000_01b3;

fn prefix_mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(PREFIX_PRIME).rotate_left(31)
}

fn prefix_word(w: &[u8]) -> u64 {
    u64::from_le_bytes(w.try_into().expect("8-byte slices"))
}

impl PrefixHash {
    /// A hash of `len` bytes, about to be fed.
    pub(crate) fn new(len: usize) -> PrefixHash {
        let seed = 0xcbf2_9ce4_8422_2325 ^ len as u64;
        PrefixHash {
            lanes: [
                seed,
                seed ^ 0x9e37_79b9_7f4a_7c15,
                seed ^ 0xbf58_476d_1ce4_e5b9,
                seed ^ 0x94d0_49bb_1331_11eb,
            ],
            pending: Vec::new(),
        }
    }

    /// Feeds the next bytes.
    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        if !self.pending.is_empty() {
            let take = (32 - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() < 32 {
                return;
            }
            let block = std::mem::take(&mut self.pending);
            self.blocks(&block);
        }
        let whole = bytes.len() / 32 * 32;
        self.blocks(&bytes[..whole]);
        self.pending.extend_from_slice(&bytes[whole..]);
    }

    fn blocks(&mut self, bytes: &[u8]) {
        for block in bytes.chunks_exact(32) {
            for (lane, w) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
                *lane = prefix_mix(*lane, prefix_word(w));
            }
        }
    }

    /// The hash of the bytes fed (which must be as many as announced).
    pub(crate) fn finish(self) -> i64 {
        let lanes = self.lanes;
        let mut h = lanes[0]
            ^ lanes[1].rotate_left(17)
            ^ lanes[2].rotate_left(31)
            ^ lanes[3].rotate_left(47);
        let mut words = self.pending.chunks_exact(8);
        for w in &mut words {
            h = prefix_mix(h, prefix_word(w));
        }
        for &b in words.remainder() {
            h = (h ^ u64::from(b)).wrapping_mul(PREFIX_PRIME);
        }
        h = (h ^ (h >> 29)).wrapping_mul(PREFIX_PRIME);
        h as i64
    }
}

/// How much of the end of an imported prefix its [`Fingerprint`] covers (256 KiB).
pub const TAIL_BYTES: usize = 256 * 1024;

/// What the ledger keeps of the bytes imported from a file, to tell whether a file that
/// grew still starts with them (then only its new lines are read) or was rewritten (then
/// it is imported again as a new version).
///
/// New entries keep a hash of the prefix's last [`TAIL_BYTES`] (`source_files.tail_hash`,
/// migration V11): checking it reads that much of the file, however long the file is,
/// where a hash of the whole prefix made every capture read and hash the whole transcript
/// again (5 MB for a long session, to add one turn). What it sees: a file that is shorter
/// than what was imported, any change in the last 256 KiB of the imported bytes, and any
/// change before them that adds or removes bytes (it moves other bytes into that window);
/// that covers Claude Code's own rewrites (tombstones remove lines, hydration writes the
/// whole file anew). What it does not see: bytes replaced by as many other bytes more than
/// 256 KiB before the end of what was imported; those lines stay stored as first imported.
///
/// Entries written before V11 keep a hash of the whole prefix (`prefix_hash`, with a NULL
/// `tail_hash`), checked once more by reading the whole file, and replaced at that import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fingerprint {
    /// [`prefix_hash`] of the last [`TAIL_BYTES`] of the prefix (all of it when shorter).
    Tail(i64),
    /// [`prefix_hash`] of the whole prefix (entries from before V11).
    Whole(i64),
}

impl Fingerprint {
    /// The fingerprint of the `len` bytes from the start of `file`, which must hold the
    /// last [`TAIL_BYTES`] of them.
    pub(crate) fn of(file: &FileView<'_>, len: usize) -> Option<Fingerprint> {
        let tail = file.range(tail_start(len), len)?;
        Some(Fingerprint::Tail(prefix_hash(tail)))
    }

    /// Where a check of this fingerprint of `len` bytes needs the file from.
    pub(crate) fn needs_from(self, len: usize) -> usize {
        match self {
            Fingerprint::Tail(_) => tail_start(len),
            Fingerprint::Whole(_) => 0,
        }
    }

    /// Whether `file` still starts with the `len` bytes this fingerprint was taken of.
    /// `None` when `file` does not hold the bytes the check needs.
    pub(crate) fn matches(self, file: &FileView<'_>, len: usize) -> Option<bool> {
        if file.len() < len {
            return Some(false);
        }
        let (from, hash) = match self {
            Fingerprint::Tail(hash) => (tail_start(len), hash),
            Fingerprint::Whole(hash) => (0, hash),
        };
        file.range(from, len)
            .map(|bytes| prefix_hash(bytes) == hash)
    }

    /// From the ledger's `prefix_hash` and `tail_hash`.
    pub(crate) fn read(prefix_hash: i64, tail_hash: Option<i64>) -> Fingerprint {
        match tail_hash {
            Some(hash) => Fingerprint::Tail(hash),
            None => Fingerprint::Whole(prefix_hash),
        }
    }

    /// The ledger's `prefix_hash` and `tail_hash` for this fingerprint.
    pub(crate) fn columns(self) -> (i64, Option<i64>) {
        match self {
            Fingerprint::Tail(hash) => (0, Some(hash)),
            Fingerprint::Whole(hash) => (hash, None),
        }
    }
}

/// Where the last [`TAIL_BYTES`] of `len` bytes start.
pub(crate) fn tail_start(len: usize) -> usize {
    len.saturating_sub(TAIL_BYTES)
}

/// A file's bytes from `base` on, as read: a grown file is read from shortly before where
/// its import stopped, not from its start.
#[derive(Clone, Copy)]
pub(crate) struct FileView<'a> {
    /// The file offset of `bytes[0]`.
    pub base: usize,
    pub bytes: &'a [u8],
}

impl<'a> FileView<'a> {
    /// The whole of a file.
    pub fn whole(bytes: &'a [u8]) -> FileView<'a> {
        FileView { base: 0, bytes }
    }

    /// The file's length.
    pub fn len(&self) -> usize {
        self.base + self.bytes.len()
    }

    /// The file's bytes `from..to`, when they were read.
    pub fn range(&self, from: usize, to: usize) -> Option<&'a [u8]> {
        let from = from.checked_sub(self.base)?;
        self.bytes.get(from..to.checked_sub(self.base)?)
    }
}
