//! `base64.RawURLEncoding.DecodeString` with Go's error text: what
//! kube-apiserver decodes a list's `continue` token with, and says of one
//! that does not decode (`illegal base64 data at input byte 0`).
//!
//! The base64 crate decodes; this maps its errors to Go's
//! `CorruptInputError` offsets. Like Go's decoder it is not strict: the
//! unused low bits of the last character may be set. Unlike Go's, it does
//! not skip `\r` and `\n` (a query can carry them only escaped): they are
//! corrupt input at their offset.

use base64::Engine as _;
use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// URL-safe, unpadded, trailing bits allowed: Go's `RawURLEncoding`.
const RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone),
);

/// Decodes unpadded URL-safe base64 as Go's `RawURLEncoding` does; the
/// error is Go's `CorruptInputError` text, its byte offset as Go computes
/// it (a lone last character is reported at the input's last byte, a
/// padding character where it stands).
pub fn decode_raw_url(text: &str) -> Result<Vec<u8>, String> {
    use base64::DecodeError;
    RAW_URL.decode(text).map_err(|e| {
        let at = match e {
            DecodeError::InvalidByte(at, _) | DecodeError::InvalidLastSymbol(at, _) => at,
            DecodeError::InvalidLength(_) => text.len().saturating_sub(1),
            DecodeError::InvalidPadding => text.find('=').unwrap_or(0),
        };
        format!("illegal base64 data at input byte {at}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows from Go's encoding/base64 base64_test.go (the pairs, and
    /// TestDecodeCorrupt's rows that hold no padding), decoded as
    /// `RawURLEncoding`.
    #[test]
    fn decodes_as_go() {
        let ok: &[(&str, &[u8])] = &[
            ("", b""),
            ("AAAAAA", b"\0\0\0\0"),
            ("Zm9vYmFy", b"foobar"),
            ("Zm9vYmE", b"fooba"),
            ("Zm9vYg", b"foob"),
            ("Zm9v", b"foo"),
            ("Zm8", b"fo"),
            ("Zg", b"f"),
            // Not strict: the last character's unused bits may be set.
            ("Zh", b"f"),
            ("abc", b"i\xb7"),
            ("-_-_", b"\xfb\xff\xbf"),
        ];
        for (text, bytes) in ok {
            assert_eq!(decode_raw_url(text).as_deref(), Ok(*bytes), "{text:?}");
        }
        let bad: &[(&str, usize)] = &[
            ("!!!!", 0),
            ("AAAAA", 4),
            ("A!\n", 1),
            ("A=", 1),
            ("Zm9vYmFy==", 8),
            ("AAAAA\n", 5),
            ("+/", 0),
            ("Zé", 1),
            // Go skips a newline; here it is corrupt input.
            ("Zm\n9v", 2),
        ];
        for (text, at) in bad {
            assert_eq!(
                decode_raw_url(text),
                Err(format!("illegal base64 data at input byte {at}")),
                "{text:?}"
            );
        }
    }
}
