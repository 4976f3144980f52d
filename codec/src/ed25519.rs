//! Ed25519 verification with ZIP-215 semantics, single and batched.
//!
//! # One consensus rule
//!
//! [`verify`] is the rule (ZIP-215, as in iota.go and iota-crypto): cofactored
//! verification `[8][s]B = [8]R + [8][k]A`, `A` and `R` any point encoding that
//! decompresses (non-canonical and small-order encodings accepted), `s` canonical
//! (`s < ℓ`). `ed25519-zebra` implements exactly this; the shared vectors
//! (`vectors/{stardust,nova}/*zip215*.json`) pin it.
//!
//! # Batching is only a speed path
//!
//! [`verify_batch`] cuts the input into chunks of at most [`CHUNK_SIZE`], checks each
//! chunk with one randomised batch equation (ed25519-zebra's `batch::Verifier`,
//! which uses the same cofactored equation, so a batch of ZIP-215-valid signatures
//! always passes) on a named rayon pool, and re-checks a chunk that fails one
//! signature at a time with [`verify`]. The verdicts therefore equal per-signature
//! [`verify`], whatever the batching (a batch passing with an invalid member has
//! probability ≤ 2⁻¹²⁸ per chunk from the 128-bit random coefficients).

use rayon::prelude::*;
use std::sync::OnceLock;

/// Most signatures checked by one batch equation.
///
/// Empirically derived (`cargo bench -p ledger-benches --bench ed25519`, sweep in
/// `benches/results/ed25519.md`): per-signature cost falls steeply up to ~32 and
/// flattens past 64, while larger chunks make a failed chunk's one-by-one re-check
/// dearer and leave cores idle on medium inputs.
pub const CHUNK_SIZE: usize = 64;

/// Fewest signatures worth a chunk of their own: below this, splitting across
/// threads costs more than the batch equation saves.
pub const MIN_CHUNK_SIZE: usize = 16;

/// One signature to check: borrowed public key, message and signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    /// The 32-byte Ed25519 public key (any encoding; ZIP-215 decides).
    pub public_key: &'a [u8; 32],
    /// The signed message.
    pub message: &'a [u8],
    /// The 64-byte signature `R || s`.
    pub signature: &'a [u8; 64],
}

impl<'a> Item<'a> {
    /// Bundles a public key, message and signature.
    pub fn new(public_key: &'a [u8; 32], message: &'a [u8], signature: &'a [u8; 64]) -> Self {
        Item {
            public_key,
            message,
            signature,
        }
    }

    /// This item's verdict under [`verify`].
    pub fn verify(&self) -> bool {
        verify(self.public_key, self.message, self.signature)
    }
}

/// Verifies `signature` over `message` under `public_key` with ZIP-215 rules.
pub fn verify(public_key: &[u8; 32], message: &[u8], signature: &[u8; 64]) -> bool {
    let Ok(vk) = ed25519_zebra::VerificationKey::try_from(*public_key) else {
        return false;
    };
    vk.verify(&ed25519_zebra::Signature::from(*signature), message)
        .is_ok()
}

/// An Ed25519 signature unlock check as in iota.go's `Ed25519Signature.Valid`: the
/// public key must hash to `address` (the pubKeyHash), and the signature must verify.
pub fn verify_for_address(
    address: &[u8; 32],
    public_key: &[u8; 32],
    message: &[u8],
    signature: &[u8; 64],
) -> bool {
    ed25519_address(public_key) == *address && verify(public_key, message, signature)
}

/// The Ed25519 address of a public key: `BLAKE2b-256(public_key)` (the pubKeyHash).
pub fn ed25519_address(public_key: &[u8; 32]) -> [u8; 32] {
    crate::hash::blake2b256(public_key)
}

/// The verdict of every item, equal to [`verify`] on each, computed in parallel batches.
pub fn verify_batch(items: &[Item<'_>]) -> Vec<bool> {
    verify_batch_chunked(items, chunk_len(items.len()))
}

/// Whether every item verifies (`true` for none); equal to `verify_batch(items)` all true,
/// but stops at the first failing chunk.
pub fn verify_all(items: &[Item<'_>]) -> bool {
    let chunk = chunk_len(items.len());
    if items.len() <= 1 {
        return items.iter().all(Item::verify);
    }
    run(|| {
        items
            .par_chunks(chunk)
            .all(|c| batch_ok(c) || c.iter().all(Item::verify))
    })
}

/// [`verify_batch`] with an explicit chunk length (for the benchmark sweep).
#[doc(hidden)]
pub fn verify_batch_chunked(items: &[Item<'_>], chunk: usize) -> Vec<bool> {
    let chunk = chunk.max(1);
    let mut out = vec![false; items.len()];
    if items.len() <= 1 {
        for (o, it) in out.iter_mut().zip(items) {
            *o = it.verify();
        }
        return out;
    }
    run(|| {
        out.par_chunks_mut(chunk)
            .zip(items.par_chunks(chunk))
            .for_each(|(verdicts, chunk)| {
                if batch_ok(chunk) {
                    verdicts.fill(true);
                } else {
                    for (v, it) in verdicts.iter_mut().zip(chunk) {
                        *v = it.verify();
                    }
                }
            });
    });
    out
}

/// Chunk length for `n` items: at most [`CHUNK_SIZE`], but small enough that every
/// pool thread gets a chunk, and not below [`MIN_CHUNK_SIZE`].
fn chunk_len(n: usize) -> usize {
    let threads = pool().map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
    n.div_ceil(threads.max(1)).clamp(MIN_CHUNK_SIZE, CHUNK_SIZE)
}

/// One batch equation over `chunk` (a single item is checked directly).
fn batch_ok(chunk: &[Item<'_>]) -> bool {
    if let [one] = chunk {
        return one.verify();
    }
    let mut batch = ed25519_zebra::batch::Verifier::new();
    for it in chunk {
        batch.queue((
            ed25519_zebra::VerificationKeyBytes::from(*it.public_key),
            ed25519_zebra::Signature::from(*it.signature),
            it.message,
        ));
    }
    batch.verify(rand::thread_rng()).is_ok()
}

/// The signature-verification pool (threads `ed25519-NN`), built once; `None` if the
/// OS refused threads, in which case work runs on the global rayon pool.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("ed25519-{i:02}"))
            .build()
            .ok()
    })
    .as_ref()
}

fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match pool() {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// An Ed25519 signing key from a 32-byte seed (RFC 8032 private key), for the dev
/// coordinator and tests.
#[derive(Clone)]
pub struct SigningKey(ed25519_zebra::SigningKey);

impl SigningKey {
    /// The key whose RFC 8032 seed is `seed`.
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        SigningKey(ed25519_zebra::SigningKey::from(*seed))
    }

    /// The 32-byte public key.
    pub fn public_key(&self) -> [u8; 32] {
        ed25519_zebra::VerificationKeyBytes::from(&self.0).into()
    }

    /// The Ed25519 address (pubKeyHash) of this key.
    pub fn address(&self) -> [u8; 32] {
        ed25519_address(&self.public_key())
    }

    /// The deterministic RFC 8032 signature of `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey(public {})", hex::encode(self.public_key()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_len_stays_within_bounds() {
        assert_eq!(chunk_len(0), MIN_CHUNK_SIZE);
        assert_eq!(chunk_len(10_000), CHUNK_SIZE);
        for n in [1, 17, 64, 100, 129, 1000] {
            let c = chunk_len(n);
            assert!(
                (MIN_CHUNK_SIZE..=CHUNK_SIZE).contains(&c),
                "n={n} chunk={c}"
            );
        }
    }

    #[test]
    fn chunked_verdicts_do_not_depend_on_chunk_length() {
        let keys: Vec<SigningKey> = (0u8..40).map(|i| SigningKey::from_seed(&[i; 32])).collect();
        let msgs: Vec<Vec<u8>> = (0u8..40).map(|i| vec![i; i as usize]).collect();
        let pks: Vec<[u8; 32]> = keys.iter().map(SigningKey::public_key).collect();
        let mut sigs: Vec<[u8; 64]> = keys.iter().zip(&msgs).map(|(k, m)| k.sign(m)).collect();
        sigs[3][0] ^= 1;
        sigs[37][40] ^= 0x80;
        let items: Vec<Item<'_>> = (0..40)
            .map(|i| Item::new(&pks[i], &msgs[i], &sigs[i]))
            .collect();
        let want: Vec<bool> = (0..40).map(|i| i != 3 && i != 37).collect();
        for chunk in [0, 1, 2, 3, 7, 16, 39, 40, 64] {
            assert_eq!(verify_batch_chunked(&items, chunk), want, "chunk {chunk}");
        }
        assert_eq!(verify_batch(&items), want);
        assert!(!verify_all(&items));
        assert!(verify_all(&items[4..37]));
    }
}
