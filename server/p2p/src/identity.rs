//! The node's peer identity in Hornet's format, so a Hornet identity carries over
//! (`docs/peering.md` §1): `<p2p store>/identity.key`, PEM type `PRIVATE KEY` holding Go's
//! `x509.MarshalPKCS8PrivateKey` of an Ed25519 key, i.e. the 16-byte RFC 8410 prefix and the
//! 32-byte seed (no public key). The peer id is the identity multihash of the protobuf public
//! key (`12D3KooW…`).

use std::{
    fs,
    io::Write,
    os::unix::fs::{DirBuilderExt, OpenOptionsExt},
    path::{Path, PathBuf},
};

use libp2p::identity::{Keypair, PeerId};

/// The key file's name inside the p2p store.
pub const IDENTITY_FILE: &str = "identity.key";
/// PEM type of the key file.
const PEM_TAG: &str = "PRIVATE KEY";
/// DER of a PKCS#8 v1 Ed25519 private key up to the 32 seed bytes (RFC 8410).
const PKCS8_ED25519_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// Why an identity could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The key file or its directory could not be read or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The key file is not an Ed25519 PKCS#8 PEM key.
    #[error("{path} is not an Ed25519 private key in PKCS#8 PEM ({why})")]
    Format {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        why: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// An Ed25519 peer identity.
#[derive(Debug, Clone)]
pub struct Identity {
    seed: [u8; 32],
    keypair: Keypair,
}

impl Identity {
    /// The identity of a 32-byte Ed25519 seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        let mut bytes = seed;
        // `ed25519_from_bytes` zeroes its input; the seed is kept for the key file.
        let keypair = Keypair::ed25519_from_bytes(&mut bytes)
            .unwrap_or_else(|_| unreachable!("any 32 bytes are an Ed25519 seed"));
        Self { seed, keypair }
    }

    /// A fresh random identity.
    pub fn generate() -> Self {
        let mut seed = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut seed);
        Self::from_seed(seed)
    }

    /// The peer id (`12D3KooW…`).
    pub fn peer_id(&self) -> PeerId {
        self.keypair.public().to_peer_id()
    }

    /// The libp2p key pair.
    pub fn keypair(&self) -> &Keypair {
        &self.keypair
    }

    /// The key file's text: PEM `PRIVATE KEY` of the PKCS#8 DER.
    pub fn to_pem(&self) -> String {
        let mut der = PKCS8_ED25519_PREFIX.to_vec();
        der.extend_from_slice(&self.seed);
        pem::encode(&pem::Pem::new(PEM_TAG, der))
    }

    /// Reads a key file's text; `path` only names it in errors.
    ///
    /// # Errors
    /// [`IdentityError::Format`] for anything but one Ed25519 PKCS#8 v1 key.
    pub fn from_pem(text: &str, path: &Path) -> Result<Self, IdentityError> {
        let bad = |why: Box<dyn std::error::Error + Send + Sync>| IdentityError::Format {
            path: path.to_owned(),
            why,
        };
        let block = pem::parse(text).map_err(|e| bad(e.into()))?;
        if block.tag() != PEM_TAG {
            return Err(bad(format!("PEM type {:?}", block.tag()).into()));
        }
        let seed = block
            .contents()
            .strip_prefix(&PKCS8_ED25519_PREFIX[..])
            .and_then(|s| <[u8; 32]>::try_from(s).ok())
            .ok_or_else(|| bad("not the 48-byte PKCS#8 form of an Ed25519 seed".into()))?;
        Ok(Self::from_seed(seed))
    }

    /// The identity in `store/identity.key`, created (directory 0700, file 0600, written
    /// atomically) when there is none; an existing file is only read.
    ///
    /// # Errors
    /// [`IdentityError`] when the store cannot be read or written or the file is not a key.
    pub fn load_or_create(store: &Path) -> Result<Self, IdentityError> {
        let path = store.join(IDENTITY_FILE);
        let io = |what: &'static str, path: &Path| {
            let path = path.to_owned();
            move |source| IdentityError::Io { what, path, source }
        };
        match fs::read_to_string(&path) {
            Ok(text) => return Self::from_pem(&text, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("reading", &path)(e)),
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(store)
            .map_err(io("creating", store))?;
        let identity = Self::generate();
        let tmp = store.join(format!("{IDENTITY_FILE}.tmp"));
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io("creating", &tmp))?;
        file.write_all(identity.to_pem().as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io("writing", &tmp))?;
        fs::rename(&tmp, &path).map_err(io("writing", &path))?;
        fs::File::open(store)
            .and_then(|d| d.sync_all())
            .map_err(io("syncing", store))?;
        Ok(identity)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_zero_seed_matches_the_published_vector() {
        let id = Identity::from_seed([0; 32]);
        assert_eq!(
            id.peer_id().to_string(),
            "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"
        );
        let pem = id.to_pem();
        assert!(
            pem.contains("MC4CAQAwBQYDK2VwBCIEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
            "{pem}"
        );
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{pem}");
        let back = Identity::from_pem(&pem, Path::new("k")).unwrap();
        assert_eq!(back.peer_id(), id.peer_id());
    }

    #[test]
    fn other_keys_and_texts_are_refused() {
        let id = Identity::from_seed([7; 32]);
        let wrong_tag = id.to_pem().replace("PRIVATE KEY", "PUBLIC KEY");
        let mut long = PKCS8_ED25519_PREFIX.to_vec();
        long.extend_from_slice(&[1; 33]);
        let too_long = pem::encode(&pem::Pem::new(PEM_TAG, long));
        let rsa_like = pem::encode(&pem::Pem::new(PEM_TAG, vec![0x30, 0x82, 0x01]));
        for text in [
            "",
            "not pem",
            wrong_tag.as_str(),
            too_long.as_str(),
            rsa_like.as_str(),
        ] {
            let e = Identity::from_pem(text, Path::new("/x/identity.key")).unwrap_err();
            assert!(e.to_string().contains("/x/identity.key"), "{e}");
        }
    }

    #[test]
    fn a_created_identity_is_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("p2pstore");
        let first = Identity::load_or_create(&store).unwrap();
        let file = store.join(IDENTITY_FILE);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&store), 0o700);
        let again = Identity::load_or_create(&store).unwrap();
        assert_eq!(again.peer_id(), first.peer_id(), "kept across restarts");
        assert!(!store.join("identity.key.tmp").exists());
        // A Hornet identity file is read as is.
        fs::write(&file, Identity::from_seed([0; 32]).to_pem()).unwrap();
        let hornet = Identity::load_or_create(&store).unwrap();
        assert_eq!(
            hornet.peer_id().to_string(),
            "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"
        );
        // A damaged file stops the start rather than being replaced.
        fs::write(&file, "garbage").unwrap();
        assert!(Identity::load_or_create(&store).is_err());
    }
}
