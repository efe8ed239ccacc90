//! Training a dictionary from a sample of the store's lines, and when to train again.

/// When and how dictionaries are trained. The defaults are the measured ones
/// (docs/performance.md, "Compressed lines"); tests lower `train_min_bytes` to compress
/// small stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// zstd's level for stored lines.
    pub level: i32,
    /// The dictionary's size, in bytes.
    pub dict_bytes: usize,
    /// Bytes of lines a training samples, at most.
    pub sample_bytes: usize,
    /// Bytes of lines (of at least [`super::MIN_LINE`]) there must be before a dictionary
    /// is trained: fewer train one that fits them and little else.
    pub train_min_bytes: u64,
    /// A new dictionary is trained when more than this many times the lines the newest was
    /// trained on have been stored since (what a store holds drifts: new tools, new
    /// record kinds).
    pub retrain_factor: i64,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            level: 3,
            dict_bytes: 112 * 1024,
            sample_bytes: 8 << 20,
            train_min_bytes: 4 << 20,
            retrain_factor: 16,
        }
    }
}

/// The longest prefix of one line a training looks at: a few huge tool results would
/// otherwise be most of the sample.
pub const SAMPLE_LINE_BYTES: usize = 16 * 1024;

/// A dictionary of at most `dict_bytes` trained on `samples`, or `None` when there is no
/// line long enough to compress. When zstd finds too little in them to train on (a few
/// lines), the lines themselves are the dictionary (zstd's "raw content" dictionary).
pub fn train(samples: &[&[u8]], dict_bytes: usize) -> Option<Vec<u8>> {
    let cut: Vec<&[u8]> = samples
        .iter()
        .filter(|s| s.len() >= super::MIN_LINE)
        .map(|s| &s[..s.len().min(SAMPLE_LINE_BYTES)])
        .collect();
    let total: usize = cut.iter().map(|s| s.len()).sum();
    if cut.is_empty() {
        return None;
    }
    // zstd wants many more sample bytes than dictionary bytes.
    let size = dict_bytes.min(total / 16).max(1024);
    let trained = (cut.len() >= 16)
        .then(|| zstd::dict::from_samples(&cut, size).ok())
        .flatten();
    trained.or_else(|| {
        let mut raw: Vec<u8> = cut.concat();
        let keep = raw.len().min(dict_bytes);
        raw.drain(..raw.len() - keep);
        // A raw-content dictionary must not start with zstd's dictionary magic number.
        (raw.len() >= 8 && !raw.starts_with(&[0x37, 0xA4, 0x30, 0xEC])).then_some(raw)
    })
}

/// Every how many lines a sample takes one, to take about `want` bytes out of `total`.
pub fn sample_step(total: u64, want: usize) -> u64 {
    (total / want.max(1) as u64).max(1)
}
