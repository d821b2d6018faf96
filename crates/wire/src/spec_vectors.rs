//! The byte vectors of `docs/wire.md` as data, for the tests that check the code against the
//! specification (the wire and tunnel crates' golden tests, the Wireshark dissector tests): every
//! fenced block opened by ```` ```hex KIND:NAME ````, its bytes written as hex pairs separated by
//! white space, `#` starting a comment to the end of the line.

/// A hex token in a vector block that is not a byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("docs/wire.md block {block}: {token:?} is not a hex byte")]
pub struct VectorError {
    /// The block's name.
    pub block: String,
    /// The token.
    pub token: String,
}

/// `(name, bytes)` of every ```` ```hex KIND:NAME ```` block of `doc`, in document order.
pub fn hex_blocks(doc: &str, kind: &str) -> Result<Vec<(String, Vec<u8>)>, VectorError> {
    let prefix = format!("```hex {kind}:");
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.trim().strip_prefix(prefix.as_str()) else {
            continue;
        };
        let name = name.trim().to_string();
        let mut bytes = Vec::new();
        for l in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            for token in l.split('#').next().unwrap_or("").split_whitespace() {
                let byte = u8::from_str_radix(token, 16)
                    .ok()
                    .filter(|_| token.len() == 2)
                    .ok_or_else(|| VectorError {
                        block: name.clone(),
                        token: token.to_string(),
                    })?;
                bytes.push(byte);
            }
        }
        out.push((name, bytes));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_one_kind_with_comments() {
        let doc = "text\n```hex golden:a\n01 02 # two\nff\n```\n```hex envelope:b\n03\n```\n";
        assert_eq!(
            hex_blocks(doc, "golden").unwrap(),
            vec![("a".to_string(), vec![1, 2, 0xff])]
        );
        assert_eq!(hex_blocks(doc, "envelope").unwrap()[0].1, vec![3]);
        let bad = hex_blocks("```hex golden:x\n0g\n```\n", "golden").unwrap_err();
        assert_eq!(bad.block, "x");
    }
}
