//! TIP-12 proof of work: b1t6, Curl-P-81, scores and nonce search.
