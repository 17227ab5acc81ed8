// BoringSSL's one-shot SHA-256, from the copy of BoringSSL that swift-crypto builds on Linux (its
// CCryptoBoringSSL target, whose symbols carry that prefix). swift-crypto's `SHA256` computes the
// same digest through a generic class whose metadata its module builds from a mangled name, which
// makes the runtime read every conformance record of the binary on first use (about 700 KiB of
// pages, at every start, for the config's digest in the start's log line). On Apple platforms,
// where swift-crypto is CryptoKit and this copy is not built, the digest uses `SHA256`.
#ifndef C_BORINGSSL_DIGEST_H
#define C_BORINGSSL_DIGEST_H

#include <stddef.h>
#include <stdint.h>

// Writes the SHA-256 of `len` bytes at `data` to `out` (32 bytes) and returns `out`.
uint8_t *CCryptoBoringSSL_SHA256(const uint8_t *data, size_t len, uint8_t out[32]);

#endif
