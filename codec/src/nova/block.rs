//! v3 blocks (TIP-46): header, Basic and Validation bodies, payloads,
//! block id, signing message, work score and `Block::validate`.

use std::borrow::Cow;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::{Context, Error, ErrorKind, Result};
use crate::hash::{blake2b256, blake2b256_parts};
use crate::nova::json::{self, tagged_enum, u64_str};
use crate::nova::params::ProtocolParameters;
use crate::nova::transaction::{with_slot, Ed25519Signature, Signature, SignedTransaction};
use crate::types::{Bytes, Fixed, FixedList, Hash32};
use crate::wire::{
    check_strictly_ascending, fields_codec, read_optional, write_optional, Codec, Len, Prefix,
    Reader,
};

/// Largest serialized block.
pub const MAX_BLOCK_SIZE: usize = 32768;
/// The protocol version this codec implements.
pub const PROTOCOL_VERSION: u8 = 3;
/// Serialized header length.
pub const HEADER_LEN: usize = 89;

const TAG: Len = Len::new(Prefix::U8, 0, 64);
const DATA: Len = Len::new(Prefix::U32, 0, 8192);
const BASIC_STRONG: Len = Len::new(Prefix::U8, 1, 8);
const BASIC_OTHER: Len = Len::new(Prefix::U8, 0, 8);
const VALIDATION_STRONG: Len = Len::new(Prefix::U8, 1, 50);
const VALIDATION_OTHER: Len = Len::new(Prefix::U8, 0, 50);

// ---------------------------------------------------------------- payloads

/// Tagged Data payload (0).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaggedData<'a> {
    /// Tag, 0..64 bytes.
    #[serde(
        default,
        deserialize_with = "json::bounded_bytes::<_, 255>",
        skip_serializing_if = "Bytes::is_empty"
    )]
    pub tag: Bytes<'a>,
    /// Data, 0..8192 bytes.
    #[serde(
        default,
        deserialize_with = "json::bounded_bytes::<_, 1048576>",
        skip_serializing_if = "Bytes::is_empty"
    )]
    pub data: Bytes<'a>,
}

fields_codec!(TaggedData<'a> { tag: "tag" with TAG, data: "data" with DATA });

/// Candidacy Announcement payload (2): no fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidacyAnnouncement {}

fields_codec!(CandidacyAnnouncement {});

/// A block payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload<'a> {
    /// Tagged data (0).
    TaggedData(TaggedData<'a>),
    /// Signed transaction (1).
    SignedTransaction(Box<SignedTransaction<'a>>),
    /// Candidacy announcement (2).
    CandidacyAnnouncement(CandidacyAnnouncement),
}

tagged_enum!(Payload, "payload", {
    0 => TaggedData,
    1 => SignedTransaction,
    2 => CandidacyAnnouncement,
});

impl Payload<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Payload<'static> {
        match self {
            Self::TaggedData(t) => Payload::TaggedData(TaggedData {
                tag: t.tag.into_owned(),
                data: t.data.into_owned(),
            }),
            Self::SignedTransaction(s) => Payload::SignedTransaction(Box::new((*s).into_owned())),
            Self::CandidacyAnnouncement(c) => Payload::CandidacyAnnouncement(c),
        }
    }
}

/// [`read_optional`], reporting a payload that needs more bytes than its
/// length prefix declares as a length mismatch (not as truncated input).
pub(crate) fn read_payload_slot<'a, T>(
    r: &mut Reader<'a>,
    read: impl FnOnce(&mut Reader<'a>) -> Result<T>,
) -> Result<Option<T>> {
    let start = r.position();
    read_optional(r, read).map_err(|e| {
        let inside = r.position() > start + 4;
        match e.kind() {
            ErrorKind::UnexpectedEnd { .. } if inside => Error::invalid(
                "payload length does not match the consumed payload bytes (declared too short)",
            ),
            ErrorKind::LengthMismatch { declared, actual } => Error::invalid(format!(
                "payload length {declared} does not match the consumed payload bytes {actual}"
            )),
            _ => e,
        }
    })
}

// ---------------------------------------------------------------- bodies

fn read_parents<'a>(
    r: &mut Reader<'a>,
    len: &Len,
    name: &'static str,
) -> Result<FixedList<'a, 36>> {
    let n = r.len(len).at(name)?;
    let list = r.slice_of::<[u8; 36]>(n).at(name)?;
    check_strictly_ascending(list.iter(), name, "parents (must be lexically ordered)").map_err(
        |e| match e.kind() {
            ErrorKind::Duplicate(_) => Error::new(ErrorKind::Duplicate("parent")).at(name),
            _ => e,
        },
    )?;
    Ok(Cow::Borrowed(list))
}

/// The three parent lists of a body (strong, weak, shallow-like), each strictly ascending,
/// with no weak parent among the others.
type ParentSets<'a> = (FixedList<'a, 36>, FixedList<'a, 36>, FixedList<'a, 36>);

/// The JSON names of the parent lists, in wire order.
const PARENT_SETS: [&str; 3] = ["strongParents", "weakParents", "shallowLikeParents"];

fn read_parent_sets<'a>(r: &mut Reader<'a>, strong: &Len, other: &Len) -> Result<ParentSets<'a>> {
    let [s, w, sl] = PARENT_SETS;
    let sets = (
        read_parents(r, strong, s)?,
        read_parents(r, other, w)?,
        read_parents(r, other, sl)?,
    );
    check_disjoint(&sets.0, &sets.1, &sets.2)?;
    Ok(sets)
}

fn write_parent_sets(sets: [&FixedList<'_, 36>; 3], out: &mut Vec<u8>) -> Result<()> {
    for (list, name) in sets.into_iter().zip(PARENT_SETS) {
        Len::new(Prefix::U8, 0, usize::from(u8::MAX))
            .put(list.len(), out)
            .at(name)?;
        for p in list.iter() {
            out.extend_from_slice(p);
        }
    }
    Ok(())
}

/// `parent_sets`: a body's three parent lists, in wire order.
macro_rules! parent_sets {
    ($($body:ident),+) => {$(
        impl<'a> $body<'a> {
            /// The strong, weak and shallow-like parents, in wire order.
            pub fn parent_sets(&self) -> [&FixedList<'a, 36>; 3] {
                [&self.strong_parents, &self.weak_parents, &self.shallow_like_parents]
            }
        }
    )+};
}

parent_sets!(BasicBody, ValidationBody);

/// Serde for a parent list: 36-byte ids as hex strings, at most 255 in JSON (the binary
/// limits are the decoder's).
mod parent_ids {
    use super::*;

    pub(super) fn serialize<S: serde::Serializer>(
        list: &FixedList<'_, 36>,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        crate::types::fixed_list::serialize(list, s)
    }

    pub(super) fn deserialize<'de, 'a, D: serde::Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<FixedList<'a, 36>, D::Error> {
        json::bounded_ids::<_, 36, 255>(d)
    }
}

fn check_disjoint(strong: &[[u8; 36]], weak: &[[u8; 36]], shallow: &[[u8; 36]]) -> Result<()> {
    for (i, w) in weak.iter().enumerate() {
        if strong.binary_search(w).is_ok() || shallow.binary_search(w).is_ok() {
            return Err(Error::invalid(
                "weak parents must be disjoint from strong and shallow-like parents",
            )
            .at_index("weakParents", i));
        }
    }
    Ok(())
}

/// Basic Block body (0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BasicBody<'a> {
    /// 1..8 strong parents, sorted.
    #[serde(with = "parent_ids")]
    pub strong_parents: FixedList<'a, 36>,
    /// 0..8 weak parents, sorted.
    #[serde(default, with = "parent_ids", skip_serializing_if = "json::is_empty")]
    pub weak_parents: FixedList<'a, 36>,
    /// 0..8 shallow-like parents, sorted.
    #[serde(default, with = "parent_ids", skip_serializing_if = "json::is_empty")]
    pub shallow_like_parents: FixedList<'a, 36>,
    /// Optional payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload<'a>>,
    /// Most mana the issuer burns for this block.
    #[serde(with = "u64_str")]
    pub max_burned_mana: u64,
}

impl<'a> Codec<'a> for BasicBody<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let (strong_parents, weak_parents, shallow_like_parents) =
            read_parent_sets(r, &BASIC_STRONG, &BASIC_OTHER)?;
        let payload = read_payload_slot(r, Payload::read).at("payload")?;
        let max_burned_mana = r.u64()?;
        Ok(Self {
            strong_parents,
            weak_parents,
            shallow_like_parents,
            payload,
            max_burned_mana,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        write_parent_sets(self.parent_sets(), out)?;
        write_optional(self.payload.as_ref(), out, |p, out| p.encode(out)).at("payload")?;
        out.extend_from_slice(&self.max_burned_mana.to_le_bytes());
        Ok(())
    }
}

/// Validation Block body (1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValidationBody<'a> {
    /// 1..50 strong parents, sorted.
    #[serde(with = "parent_ids")]
    pub strong_parents: FixedList<'a, 36>,
    /// 0..50 weak parents, sorted.
    #[serde(default, with = "parent_ids", skip_serializing_if = "json::is_empty")]
    pub weak_parents: FixedList<'a, 36>,
    /// 0..50 shallow-like parents, sorted.
    #[serde(default, with = "parent_ids", skip_serializing_if = "json::is_empty")]
    pub shallow_like_parents: FixedList<'a, 36>,
    /// Highest protocol version the issuer supports (≥ header version).
    pub highest_supported_version: u8,
    /// Hash of the protocol parameters the issuer uses.
    pub protocol_parameters_hash: Hash32<'a>,
}

impl<'a> Codec<'a> for ValidationBody<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let (strong_parents, weak_parents, shallow_like_parents) =
            read_parent_sets(r, &VALIDATION_STRONG, &VALIDATION_OTHER)?;
        let highest_supported_version = r.u8()?;
        let protocol_parameters_hash = Hash32::borrowed(r.array()?);
        Ok(Self {
            strong_parents,
            weak_parents,
            shallow_like_parents,
            highest_supported_version,
            protocol_parameters_hash,
        })
    }
    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        write_parent_sets(self.parent_sets(), out)?;
        out.push(self.highest_supported_version);
        out.extend_from_slice(self.protocol_parameters_hash.as_array());
        Ok(())
    }
}

/// A block body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body<'a> {
    /// Basic block (0).
    Basic(BasicBody<'a>),
    /// Validation block (1).
    Validation(ValidationBody<'a>),
}

tagged_enum!(Body, "body", { 0 => Basic, 1 => Validation });

impl Body<'_> {
    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Body<'static> {
        let own = |c: FixedList<'_, 36>| -> FixedList<'static, 36> { Cow::Owned(c.into_owned()) };
        match self {
            Self::Basic(b) => Body::Basic(BasicBody {
                strong_parents: own(b.strong_parents),
                weak_parents: own(b.weak_parents),
                shallow_like_parents: own(b.shallow_like_parents),
                payload: b.payload.map(Payload::into_owned),
                max_burned_mana: b.max_burned_mana,
            }),
            Self::Validation(v) => Body::Validation(ValidationBody {
                strong_parents: own(v.strong_parents),
                weak_parents: own(v.weak_parents),
                shallow_like_parents: own(v.shallow_like_parents),
                highest_supported_version: v.highest_supported_version,
                protocol_parameters_hash: v.protocol_parameters_hash.into_owned(),
            }),
        }
    }

    /// Strong parents.
    pub fn strong_parents(&self) -> &[[u8; 36]] {
        match self {
            Self::Basic(b) => &b.strong_parents,
            Self::Validation(v) => &v.strong_parents,
        }
    }
}

// ---------------------------------------------------------------- header

/// The 89-byte block header, read as a zerocopy view.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct Header {
    /// Protocol version (3).
    pub protocol_version: u8,
    /// Network id.
    pub network_id: U64,
    /// Issuing time, Unix nanoseconds.
    pub issuing_time: U64,
    /// Slot commitment id (hash || slot).
    pub slot_commitment_id: [u8; 36],
    /// Latest finalized slot.
    pub latest_finalized_slot: U32,
    /// Issuer account id.
    pub issuer_id: [u8; 32],
}

impl Header {
    /// The slot of the commitment (its last 4 bytes).
    pub fn commitment_slot(&self) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.slot_commitment_id[32..]);
        u32::from_le_bytes(b)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HeaderJson {
    protocol_version: u8,
    #[serde(with = "u64_str")]
    network_id: u64,
    #[serde(with = "u64_str")]
    issuing_time: u64,
    slot_commitment_id: Fixed<'static, 36>,
    latest_finalized_slot: u32,
    issuer_id: Hash32<'static>,
}

impl Serialize for Header {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HeaderJson {
            protocol_version: self.protocol_version,
            network_id: self.network_id.get(),
            issuing_time: self.issuing_time.get(),
            slot_commitment_id: Fixed::owned(self.slot_commitment_id),
            latest_finalized_slot: self.latest_finalized_slot.get(),
            issuer_id: Fixed::owned(self.issuer_id),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Header {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let j = HeaderJson::deserialize(d)?;
        Ok(Self {
            protocol_version: j.protocol_version,
            network_id: j.network_id.into(),
            issuing_time: j.issuing_time.into(),
            slot_commitment_id: j.slot_commitment_id.to_array(),
            latest_finalized_slot: j.latest_finalized_slot.into(),
            issuer_id: j.issuer_id.to_array(),
        })
    }
}

// ---------------------------------------------------------------- block

/// A v3 block: header, body and the issuer's signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Block<'a> {
    /// Header (zerocopy view into the input).
    pub header: Cow<'a, Header>,
    /// Body.
    pub body: Body<'a>,
    /// Issuer signature over the signing message.
    pub signature: Signature<'a>,
}

impl<'a> Codec<'a> for Block<'a> {
    fn read(r: &mut Reader<'a>) -> Result<Self> {
        let header: &'a Header = r.view().at("header")?;
        if header.issuing_time.get() > i64::MAX as u64 {
            return Err(Error::invalid("issuing time out of range").at("header"));
        }
        let body = Body::read(r).at("body")?;
        if let Body::Validation(v) = &body {
            if v.highest_supported_version < header.protocol_version {
                return Err(Error::invalid(
                    "highest supported version is below the protocol version",
                )
                .at("body"));
            }
        }
        let signature = Signature::read(r).at("signature")?;
        Ok(Self {
            header: Cow::Borrowed(header),
            body,
            signature,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(self.header.as_bytes());
        self.body.encode(out)?;
        self.signature.encode(out)?;
        Ok(())
    }

    fn decode(bytes: &'a [u8]) -> Result<Self> {
        if bytes.len() > MAX_BLOCK_SIZE {
            return Err(Error::invalid(format!(
                "block of {} bytes exceeds {MAX_BLOCK_SIZE}",
                bytes.len()
            )));
        }
        let mut r = Reader::new(bytes);
        let b = Self::read(&mut r)?;
        r.finish()?;
        Ok(b)
    }
}

/// A block's JSON as read, before the binary rules are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockJson {
    header: Header,
    body: Body<'static>,
    signature: Signature<'static>,
}

impl BlockJson {
    fn into_block(self) -> Block<'static> {
        Block {
            header: Cow::Owned(self.header),
            body: self.body,
            signature: self.signature,
        }
    }
}

impl<'de> Deserialize<'de> for Block<'_> {
    /// JSON is checked by the same rules as the binary form: the value is
    /// encoded and decoded again.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let b = BlockJson::deserialize(d)?.into_block();
        b.to_bytes()
            .and_then(|bytes| Block::decode(&bytes).map(drop))
            .map_err(|e| D::Error::custom(format!("invalid block: {e}")))?;
        Ok(b)
    }
}

/// The parts of a block's identity, computed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockHashes {
    /// BLAKE2b-256 of the header bytes.
    pub header_hash: [u8; 32],
    /// BLAKE2b-256 of the body bytes (type byte included).
    pub body_hash: [u8; 32],
}

impl BlockHashes {
    /// The Ed25519 message: `headerHash || bodyHash` (64 bytes, not hashed again).
    pub fn signing_message(&self) -> [u8; 64] {
        let mut m = [0u8; 64];
        m[..32].copy_from_slice(&self.header_hash);
        m[32..].copy_from_slice(&self.body_hash);
        m
    }
}

impl<'a> Block<'a> {
    /// Parses a block from JSON (strict: see [`Deserialize`]).
    ///
    /// # Errors
    /// Malformed JSON, or any syntactic rule the binary decoder enforces.
    pub fn from_json(s: &str) -> Result<Block<'static>> {
        serde_json::from_str(s).map_err(|e| Error::new(ErrorKind::Json(e.to_string())))
    }

    /// The bytes of a block given as JSON, encoded once and not decoded again: for a caller
    /// that decodes them next anyway (the node's submit), so that the binary rules run once.
    /// [`Block::from_json`] is the checked way to read JSON.
    ///
    /// # Errors
    /// Malformed JSON, or a value with no wire form (a list longer than its prefix counts).
    pub fn json_to_bytes(s: &str) -> Result<Vec<u8>> {
        serde_json::from_str::<BlockJson>(s)
            .map_err(|e| Error::new(ErrorKind::Json(e.to_string())))?
            .into_block()
            .to_bytes()
    }

    /// Detaches from the input buffer.
    pub fn into_owned(self) -> Block<'static> {
        Block {
            header: Cow::Owned(self.header.into_owned()),
            body: self.body.into_owned(),
            signature: self.signature.into_owned(),
        }
    }

    /// Header and body hashes.
    ///
    /// # Errors
    /// As [`Codec::encode`]: a body with no wire form has no hash.
    pub fn hashes(&self) -> Result<BlockHashes> {
        let mut body = Vec::with_capacity(512);
        self.body.encode(&mut body).at("body")?;
        Ok(BlockHashes {
            header_hash: blake2b256(self.header.as_bytes()),
            body_hash: blake2b256(&body),
        })
    }

    /// The message the issuer signs: `headerHash || bodyHash`.
    ///
    /// # Errors
    /// As [`Block::hashes`].
    pub fn signing_message(&self) -> Result<[u8; 64]> {
        Ok(self.hashes()?.signing_message())
    }

    /// The block's slot, from its issuing time.
    pub fn slot(&self, params: &ProtocolParameters) -> u32 {
        params.slot_of(self.header.issuing_time.get())
    }

    /// Block id: `H(headerHash || bodyHash || signature bytes) || slot`.
    ///
    /// # Errors
    /// As [`Block::hashes`].
    pub fn id(&self, params: &ProtocolParameters) -> Result<[u8; 36]> {
        let h = self.hashes()?;
        let mut sig = Vec::with_capacity(Signature::LEN);
        self.signature.encode(&mut sig).at("signature")?;
        Ok(with_slot(
            blake2b256_parts(&[&h.header_hash, &h.body_hash, &sig]),
            self.slot(params),
        ))
    }

    /// Verifies the issuer signature (ZIP-215) over the signing message; `false` for a
    /// block with no wire form (there is no message to have signed).
    pub fn verify_signature(&self) -> bool {
        let Signature::Ed25519(s) = &self.signature;
        self.signing_message().is_ok_and(|m| s.verify(&m))
    }

    /// The signature's public key.
    pub fn signature_key(&self) -> &Ed25519Signature<'a> {
        let Signature::Ed25519(s) = &self.signature;
        s
    }

    /// Work score (TIP-45): 0 for validation blocks.
    ///
    /// # Errors
    /// As [`Codec::encode`]: the payload's size counts, so it needs a wire form.
    pub fn work_score(&self, params: &ProtocolParameters) -> Result<u64> {
        let w = &params.work_score_parameters;
        let Body::Basic(b) = &self.body else {
            return Ok(0);
        };
        let mut s = u64::from(w.block);
        if let Some(p) = &b.payload {
            s += u64::from(w.data_byte) * p.to_bytes().at("payload")?.len() as u64;
            if let Payload::SignedTransaction(tx) = p {
                s += tx.work_score_parts(w);
            }
        }
        Ok(s)
    }
}

impl Block<'_> {
    /// Block id straight from serialized bytes (header = first 89, signature =
    /// last 97, body = the rest); no decoding. `None` when too short. The same
    /// name as the v2 `stardust::Block::id_of`.
    pub fn id_of(bytes: &[u8], params: &ProtocolParameters) -> Option<[u8; 36]> {
        block_id_of(bytes, params)
    }

    /// Checks this decoded block against the protocol parameters: protocol version,
    /// network id, commitment age, transaction rules that need parameters, and the
    /// issuer signature (last, so syntax errors are reported first). The same name as
    /// the v2 `stardust::Block::validate`.
    ///
    /// # Errors
    /// The first rule broken, in plain words.
    pub fn validate(&self, params: &ProtocolParameters) -> Result<()> {
        validate(self, params)
    }
}

fn block_id_of(bytes: &[u8], params: &ProtocolParameters) -> Option<[u8; 36]> {
    if bytes.len() < HEADER_LEN + Signature::LEN + 1 {
        return None;
    }
    let (header, rest) = bytes.split_at(HEADER_LEN);
    let (body, sig) = rest.split_at(rest.len() - Signature::LEN);
    let h = Header::ref_from_bytes(header).ok()?;
    let hh = blake2b256(header);
    let bh = blake2b256(body);
    Some(with_slot(
        blake2b256_parts(&[&hh, &bh, sig]),
        params.slot_of(h.issuing_time.get()),
    ))
}

/// Genesis block id: 32 zero bytes || genesis slot.
pub fn genesis_block_id(params: &ProtocolParameters) -> [u8; 36] {
    with_slot([0; 32], params.genesis_slot)
}

fn validate(block: &Block<'_>, params: &ProtocolParameters) -> Result<()> {
    check_block_syntax(block, params)?;
    if !block.verify_signature() {
        return Err(Error::invalid(
            "invalid block signature: Ed25519 verification over headerHash||bodyHash fails",
        )
        .at("signature"));
    }
    Ok(())
}

/// Everything [`Block::validate`] checks except the signature.
///
/// # Errors
/// The first rule broken.
pub fn check_block_syntax(block: &Block<'_>, params: &ProtocolParameters) -> Result<()> {
    let h = &*block.header;
    if h.protocol_version != PROTOCOL_VERSION || h.protocol_version != params.version {
        return Err(Error::invalid(format!(
            "protocol version mismatch: block has {}, node supports {}",
            h.protocol_version, params.version
        ))
        .at("header.protocolVersion"));
    }
    let net = params.network_id();
    if h.network_id.get() != net {
        return Err(Error::invalid(format!(
            "network id mismatch: block has {}, expected {net}",
            h.network_id.get()
        ))
        .at("header.networkId"));
    }
    let size = block.to_bytes()?.len();
    if size > MAX_BLOCK_SIZE {
        return Err(Error::invalid(format!(
            "block of {size} bytes exceeds {MAX_BLOCK_SIZE}"
        )));
    }
    let s = block.slot(params);
    let c = h.commitment_slot();
    let min_age = params.min_committable_age;
    let max_age = params.max_committable_age;
    if c > params.genesis_slot && c.saturating_add(min_age) > s {
        return Err(Error::invalid(format!(
            "commitment too recent: commitment slot {c}, block slot {s}"
        ))
        .at("header.slotCommitmentId"));
    }
    if u64::from(s) > u64::from(c) + u64::from(max_age) {
        return Err(Error::invalid(format!(
            "commitment too old: commitment slot {c}, block slot {s}"
        ))
        .at("header.slotCommitmentId"));
    }
    let Body::Basic(body) = &block.body else {
        return Ok(());
    };
    let Some(Payload::SignedTransaction(stx)) = &body.payload else {
        return Ok(());
    };
    let tx = &stx.transaction;
    let at = |e: Error| e.at("transaction").at("payload").at("body");
    if tx.network_id != net {
        return Err(at(Error::invalid(format!(
            "transaction network id mismatch: {} instead of {net}",
            tx.network_id
        ))));
    }
    if tx.creation_slot > s {
        return Err(at(Error::invalid(format!(
            "transaction creation slot {} is after the block slot {s}",
            tx.creation_slot
        ))));
    }
    if let Some(ci) = tx.commitment_input() {
        let mut b = [0u8; 4];
        b.copy_from_slice(&ci[32..]);
        let ci = u32::from_le_bytes(b);
        // iota.go: the min-age rule is waived for a commitment input of slot 0.
        if ci > 0 && ci.saturating_add(min_age) > s {
            return Err(at(Error::invalid(format!(
                "commitment input too recent: slot {ci}, block slot {s}"
            ))));
        }
        if u64::from(s) > u64::from(ci) + u64::from(max_age) {
            return Err(at(Error::invalid(format!(
                "commitment input too old: slot {ci}, block slot {s}"
            ))));
        }
        if ci > c {
            return Err(at(Error::invalid(
                "commitment input is newer than the block's slot commitment",
            )));
        }
    }
    let mut total: u64 = 0;
    let mut mana: u64 = 0;
    for (i, o) in tx.outputs.iter().enumerate() {
        let min = o
            .min_deposit(&params.storage_score_parameters)
            .map_err(|e| at(e.at_index("outputs", i)))?;
        if o.amount() < min {
            return Err(at(Error::invalid(format!(
                "output amount {} does not cover the min storage deposit {min}",
                o.amount()
            ))
            .at_index("outputs", i)));
        }
        total = total.saturating_add(o.amount());
        mana = mana.saturating_add(o.mana());
    }
    if total > params.token_supply {
        return Err(at(Error::invalid(
            "sum of output amounts exceeds the token supply",
        )));
    }
    let allotted = tx
        .allotments
        .iter()
        .fold(0u64, |a, x| a.saturating_add(x.mana.get()));
    if mana > params.max_mana()
        || allotted > params.max_mana()
        || mana.saturating_add(allotted) > params.max_mana()
    {
        return Err(at(Error::invalid("sum of mana exceeds the maximum mana")));
    }
    Ok(())
}
