package statestore

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Encrypted value envelope (docs/kafka-store.md):
//
//	off len field
//	  0   1 0xc1: marks an envelope (msgpack never uses 0xc1, and a plain
//	          record value always starts with a msgpack array header)
//	  1   1 envelope version (1)
//	  2   4 key fingerprint: the first 4 bytes of SHA-256("flinkgo-action-state-key-v1" || key)
//	  6  12 nonce, random per record
//	 18   - AES-256-GCM ciphertext of the plain record value, then its 16-byte tag;
//	          the associated data is the record key, so a value moved under
//	          another key does not decrypt
const (
	envelopeMagic   = 0xc1
	envelopeVersion = 1
	fingerprintLen  = 4
	envelopeHeader  = 2 + fingerprintLen + 12
)

// ParseEncryptionKey reads an AES-256 key: 64 hex digits (surrounding white
// space ignored) or exactly 32 raw bytes.
func ParseEncryptionKey(b []byte) ([]byte, error) {
	if t := bytes.TrimSpace(b); len(t) == 64 {
		k := make([]byte, 32)
		if _, err := hex.Decode(k, t); err == nil {
			return k, nil
		}
	}
	if len(b) == 32 {
		return bytes.Clone(b), nil
	}
	return nil, fmt.Errorf("an encryption key is 64 hex digits or 32 raw bytes, found %d bytes; generate one with `openssl rand -hex 32`", len(b))
}

// valueCipher seals and opens record values. A nil *valueCipher passes
// plain values through and refuses envelopes.
type valueCipher struct {
	aead cipher.AEAD
	fp   [fingerprintLen]byte
}

func newValueCipher(key []byte) (*valueCipher, error) {
	if key == nil {
		return nil, nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKafkaConfig, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKafkaConfig, err)
	}
	c := &valueCipher{aead: aead}
	sum := sha256.Sum256(append([]byte("flinkgo-action-state-key-v1"), key...))
	copy(c.fp[:], sum[:])
	return c, nil
}

// seal returns the envelope of plain under the record key.
func (c *valueCipher) seal(key, plain []byte) ([]byte, error) {
	if c == nil {
		return plain, nil
	}
	out := make([]byte, envelopeHeader, envelopeHeader+len(plain)+c.aead.Overhead())
	out[0], out[1] = envelopeMagic, envelopeVersion
	copy(out[2:], c.fp[:])
	nonce := out[2+fingerprintLen : envelopeHeader]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("statestore: no randomness for an encryption nonce: %w", err)
	}
	return c.aead.Seal(out, nonce, plain, key), nil
}

// open returns the plain value of v. A plain value passes through (so that
// encryption can be switched on for an existing log); an envelope needs the
// key it was sealed with.
func (c *valueCipher) open(key, v []byte) ([]byte, error) {
	if len(v) == 0 || v[0] != envelopeMagic {
		return v, nil
	}
	if len(v) < envelopeHeader+16 {
		return nil, &DecryptError{Key: bytes.Clone(key), Reason: fmt.Sprintf("envelope of %d bytes is shorter than its %d-byte header and tag", len(v), envelopeHeader+16)}
	}
	if v[1] != envelopeVersion {
		return nil, &DecryptError{Key: bytes.Clone(key), Reason: fmt.Sprintf("envelope version %d, this build reads version %d", v[1], envelopeVersion)}
	}
	if c == nil {
		return nil, &DecryptError{Key: bytes.Clone(key), Reason: "the value is encrypted and no key is configured; set kafka.encryption.key.file or kafka.encryption.key.env"}
	}
	if !bytes.Equal(v[2:2+fingerprintLen], c.fp[:]) {
		return nil, &DecryptError{Key: bytes.Clone(key), Reason: fmt.Sprintf("encrypted with another key (fingerprint %x, the configured key's is %x); configure the key the job wrote with",
			v[2:2+fingerprintLen], c.fp)}
	}
	plain, err := c.aead.Open(nil, v[2+fingerprintLen:envelopeHeader], v[envelopeHeader:], key)
	if err != nil {
		return nil, &DecryptError{Key: bytes.Clone(key), Reason: "authentication failed: the value was altered or moved under another record key"}
	}
	return plain, nil
}
