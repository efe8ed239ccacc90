//! Compressed lines (issue 30): a stored line may be held as a zstd frame made against a
//! dictionary trained on the store's own lines, because lines compressed one by one with a
//! dictionary take about a fifth of their size (and a line must stay readable alone: export,
//! resume and search read single rows).
//!
//! `rows.dict` names the dictionary (`dictionaries.id`, V14); NULL means the line is stored
//! as it came. A dictionary's id is the XXH3-64 of its bytes, so the same dictionary has the
//! same id everywhere and any thread can name one before it is stored. Checksums stay over
//! the original bytes ([`crate::integrity`]): every reader gets those back, through the SQL
//! function `line(raw, dict)` ([`sql`]) or [`unpack`].
//!
//! Dictionaries are loaded once per process and kept for its life (they are few: one per
//! training); a decoder is found by id in a process-wide cache.

pub mod sql;
mod train;

pub use train::{sample_step, train, Tuning, SAMPLE_LINE_BYTES};

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use zstd::dict::{DecoderDictionary, EncoderDictionary};

/// Lines shorter than this are stored as they are: a frame's header and the dictionary
/// reference cost more than such a line saves (measured on the corpus: below 64 bytes
/// lines shrank by less than 10 %).
pub const MIN_LINE: usize = 64;

/// SQLite's default limit on one string or blob (`SQLITE_MAX_LENGTH`, 10^9 bytes), less
/// room for the other columns of the line's row, which the same limit bounds.
pub const MAX_VALUE_BYTES: u64 = 1_000_000_000 - 1024 * 1024;

/// The id a dictionary's bytes get: their XXH3-64, as a signed integer (never 0).
pub fn dictionary_id(bytes: &[u8]) -> i64 {
    let id = xxhash_rust::xxh3::xxh3_64(bytes) as i64;
    if id == 0 {
        1
    } else {
        id
    }
}

type Decoders = HashMap<i64, &'static DecoderDictionary<'static>>;
type Encoders = HashMap<(i64, i32), &'static EncoderDictionary<'static>>;

fn decoders() -> &'static Mutex<Decoders> {
    static CACHE: OnceLock<Mutex<Decoders>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

fn encoders() -> &'static Mutex<Encoders> {
    static CACHE: OnceLock<Mutex<Encoders>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// Makes the dictionary `bytes` (with id `id`) known to this process's decoders. Kept for
/// the process's life: a dictionary is never unloaded while a row may name it.
pub fn remember(id: i64, bytes: &[u8]) {
    let mut cache = decoders().lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(id)
        .or_insert_with(|| Box::leak(Box::new(DecoderDictionary::copy(bytes))));
}

/// Whether this process knows the dictionary `id`.
pub fn knows(id: i64) -> bool {
    decoders()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&id)
}

fn decoder(id: i64) -> Option<&'static DecoderDictionary<'static>> {
    decoders()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .copied()
}

/// Why a stored line could not be given back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unpack {
    /// The dictionary it names is not loaded (nor in the database).
    NoDictionary(i64),
    /// The stored bytes are not a frame of that dictionary (damaged on disk).
    Damaged,
}

thread_local! {
    static DCTX: RefCell<Option<zstd::zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
}

/// The original bytes of a line stored with dictionary `dict`.
///
/// # Errors
/// [`Unpack::NoDictionary`] when the dictionary is not loaded, [`Unpack::Damaged`] when the
/// bytes do not decode to the length their frame declares.
pub fn unpack(dict: i64, stored: &[u8]) -> Result<Vec<u8>, Unpack> {
    let ddict = decoder(dict).ok_or(Unpack::NoDictionary(dict))?;
    let len = unpacked_len(stored).ok_or(Unpack::Damaged)?;
    if len > MAX_VALUE_BYTES {
        return Err(Unpack::Damaged);
    }
    let mut out = Vec::with_capacity(len as usize);
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = slot.get_or_insert_with(zstd::zstd_safe::DCtx::create);
        match dctx.decompress_using_ddict(&mut out, stored, ddict.as_ddict()) {
            Ok(n) if n as u64 == len => Ok(()),
            _ => Err(Unpack::Damaged),
        }
    })?;
    Ok(out)
}

/// The original length of a line stored compressed, from its frame header (no decoding).
pub fn unpacked_len(stored: &[u8]) -> Option<u64> {
    zstd::zstd_safe::get_frame_content_size(stored)
        .ok()
        .flatten()
}

/// Compresses lines against one dictionary. Cheap to make and to share: zstd's prepared
/// dictionary is built on the first [`Packer::compressor`] (a hook's capture of a few short
/// lines may never need it), and each thread makes its own [`Compressor`].
pub struct Packer {
    id: i64,
    level: i32,
    bytes: Vec<u8>,
    dict: OnceLock<&'static EncoderDictionary<'static>>,
}

impl std::fmt::Debug for Packer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packer").field("id", &self.id).finish()
    }
}

impl Packer {
    /// A packer for the dictionary `bytes` at zstd `level`.
    pub fn new(bytes: &[u8], level: i32) -> Packer {
        Packer {
            id: dictionary_id(bytes),
            level,
            bytes: bytes.to_vec(),
            dict: OnceLock::new(),
        }
    }

    /// The dictionary's id (`rows.dict`).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// zstd's prepared dictionary, made once per process. Its decoder is remembered too, so
    /// that lines this process stores can be read back before their transaction commits.
    fn encoder(&self) -> &'static EncoderDictionary<'static> {
        self.dict.get_or_init(|| {
            remember(self.id, &self.bytes);
            *encoders()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry((self.id, self.level))
                .or_insert_with(|| {
                    Box::leak(Box::new(EncoderDictionary::copy(&self.bytes, self.level)))
                })
        })
    }

    /// A compressor for one thread.
    ///
    /// # Panics
    /// When zstd cannot make a context (out of memory).
    pub fn compressor(&self) -> Compressor {
        let mut inner = zstd::bulk::Compressor::with_prepared_dictionary(self.encoder())
            .expect("a zstd compression context");
        // The row names the dictionary: its 4-byte id in every frame would be waste.
        let _ = inner.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false));
        Compressor { id: self.id, inner }
    }
}

/// A line compressed for storage: the frame and the dictionary it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    /// The dictionary (`rows.dict`).
    pub dict: i64,
    /// The zstd frame (`rows.raw`).
    pub bytes: Vec<u8>,
}

/// One thread's compressor (see [`Packer::compressor`]).
pub struct Compressor {
    id: i64,
    inner: zstd::bulk::Compressor<'static>,
}

impl Compressor {
    /// The line compressed, or `None` when it is to be stored as it is: shorter than
    /// [`MIN_LINE`], or not smaller compressed.
    pub fn pack(&mut self, line: &[u8]) -> Option<Packed> {
        if line.len() < MIN_LINE {
            return None;
        }
        let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(line.len()));
        match self.inner.compress_to_buffer(line, &mut out) {
            Ok(n) if n < line.len() => {
                out.shrink_to_fit();
                Some(Packed {
                    dict: self.id,
                    bytes: out,
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines() -> Vec<Vec<u8>> {
        (0..2000)
            .map(|i| {
                format!(
                    r#"{{"type":"user","uuid":"u-{i}","sessionId":"s","message":{{"role":"user","content":"line number {i} says {}"}}}}"#,
                    "hello ".repeat(i % 17)
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn packed_lines_come_back_byte_for_byte() {
        let lines = lines();
        let samples: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        let dict = train(&samples, 16 * 1024).expect("a dictionary");
        let packer = Packer::new(&dict, 3);
        let mut c = packer.compressor();
        let mut packed = 0;
        for line in &lines {
            if let Some(p) = c.pack(line) {
                packed += 1;
                assert!(p.bytes.len() < line.len());
                assert_eq!(unpacked_len(&p.bytes), Some(line.len() as u64));
                assert_eq!(&unpack(p.dict, &p.bytes).expect("unpack"), line);
            }
        }
        assert!(packed > 1900, "{packed}");
        assert!(c.pack(b"{\"short\":1}").is_none(), "short lines stay plain");
        assert_eq!(unpack(packer.id(), b"not a frame"), Err(Unpack::Damaged));
        assert_eq!(unpack(42, b"x"), Err(Unpack::NoDictionary(42)));
    }
}
