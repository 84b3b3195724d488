//! Find the line and column of a field (`processes[0].trials[1].seconds`) in JSON text, so
//! that type errors found after parsing still point into the file.

enum Seg {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    segs.push(Seg::Key(std::mem::take(&mut cur)));
                }
                let mut num = String::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    num.push(d);
                }
                if let Ok(n) = num.parse() {
                    segs.push(Seg::Index(n));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        segs.push(Seg::Key(cur));
    }
    segs
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// Returns (decoded-ish string, index after the closing quote).
fn read_string(b: &[u8], i: usize) -> Option<(String, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let mut j = start;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => {
                let raw = std::str::from_utf8(&b[start..j]).ok()?;
                let s: String = serde_json::from_str(&format!("\"{raw}\"")).ok()?;
                return Some((s, j + 1));
            }
            _ => j += 1,
        }
    }
    None
}

fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    let i = skip_ws(b, i);
    match *b.get(i)? {
        b'"' => read_string(b, i).map(|(_, j)| j),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = read_string(b, j)?.1;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

fn find_key(b: &[u8], i: usize, key: &str) -> Option<usize> {
    let mut i = skip_ws(b, i);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) == Some(&b'}') {
            return None;
        }
        let (k, j) = read_string(b, i)?;
        if k == key {
            return Some(i);
        }
        i = skip_ws(b, j);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_value(b, i + 1)?;
        i = skip_ws(b, i);
        if b.get(i) == Some(&b',') {
            i += 1;
        }
    }
}

fn value_after_key(b: &[u8], key_at: usize) -> Option<usize> {
    let (_, j) = read_string(b, key_at)?;
    let j = skip_ws(b, j);
    if b.get(j) != Some(&b':') {
        return None;
    }
    Some(skip_ws(b, j + 1))
}

fn find_index(b: &[u8], i: usize, n: usize) -> Option<usize> {
    let mut i = skip_ws(b, i);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    i += 1;
    let mut k = 0;
    loop {
        i = skip_ws(b, i);
        if b.get(i) == Some(&b']') {
            return None;
        }
        if k == n {
            return Some(i);
        }
        i = skip_value(b, i)?;
        i = skip_ws(b, i);
        if b.get(i) == Some(&b',') {
            i += 1;
        }
        k += 1;
    }
}

/// 1-based (line, column) of the field named by `path` (the key of the last object member, or
/// the element of the last index); the deepest existing prefix when the field is missing.
pub fn locate(text: &str, path: &str) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut at = skip_ws(b, 0);
    let mut found = None;
    for seg in parse_path(path) {
        let value_at = match seg {
            Seg::Key(k) => match find_key(b, at, &k) {
                Some(key_at) => {
                    found = Some(key_at);
                    value_after_key(b, key_at)
                }
                None => None,
            },
            Seg::Index(n) => find_index(b, at, n).inspect(|&p| found = Some(p)),
        };
        match value_at {
            Some(v) => at = v,
            None => break,
        }
    }
    let pos = found?;
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map(|p| p + 1).unwrap_or(0) + 1;
    Some((line, col))
}

#[cfg(test)]
mod tests {
    use super::locate;

    #[test]
    fn finds_nested_fields() {
        let t = "{\n \"a\": 1,\n \"p\": [\n  {\"t\": [\n   {\"s\": \"x,]}\"}, {\"s\": 2}\n  ]}\n ]\n}\n";
        assert_eq!(locate(t, "a"), Some((2, 2)));
        assert_eq!(locate(t, "p[0].t[1].s"), Some((5, 20)));
        assert_eq!(locate(t, "p[0].t[1].zz"), Some((5, 19)));
        assert_eq!(locate(t, "nope"), None);
    }
}
