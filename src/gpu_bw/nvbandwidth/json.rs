//! JSON laid out as nvbandwidth's `-j` prints it (its JSON library's
//! `toStyledString`, jsoncpp 1.9.5's stream writer): members sorted by
//! name in byte order, one tab of indent per level, `"name" : value`;
//! every brace, bracket and member on a line of its own (a container
//! that is a member's value starts on the line after its name, which
//! ends in `" : "`), every array element on its own line, empty
//! containers as `[]` and `{}`; reals with 17 significant digits (and
//! `.0` where that leaves no point). Checked by hand against the
//! library's own output for the same document.

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Int(i64),
    Real(f64),
    Str(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

impl Json {
    pub fn object() -> Json {
        Json::Object(BTreeMap::new())
    }

    /// The member `name` of an object (made null if absent).
    pub fn member(&mut self, name: &str) -> &mut Json {
        if !matches!(self, Json::Object(_)) {
            *self = Json::object();
        }
        let Json::Object(m) = self else { unreachable!("made an object above") };
        m.entry(name.to_string()).or_insert(Json::Null)
    }

    /// Appends to an array (a null becomes one).
    pub fn push(&mut self, v: Json) {
        if !matches!(self, Json::Array(_)) {
            *self = Json::Array(Vec::new());
        }
        if let Json::Array(a) = self {
            a.push(v);
        }
    }

    /// The last element of an array.
    pub fn last_mut(&mut self) -> Option<&mut Json> {
        match self {
            Json::Array(a) => a.last_mut(),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Json::Array(a) => a.len(),
            Json::Object(m) => m.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The styled text, ending in a newline.
    pub fn styled(&self) -> String {
        let mut w = Writer { doc: String::new(), indent: String::new(), indented: true };
        w.value(self);
        w.doc.push('\n');
        w.doc
    }
}

/// A real as the library writes it: `%.17g`, and `.0` added where that
/// has neither a point nor an exponent.
pub fn real_text(v: f64) -> String {
    if v.is_nan() {
        return "null".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "1e+9999" } else { "-1e+9999" }.into();
    }
    let mut s = crate::c_num::general(v, 17);
    if !s.contains('.') && !s.contains('e') {
        s.push_str(".0");
    }
    s
}

fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

struct Writer {
    doc: String,
    indent: String,
    /// The line is already started (at the top, and for array elements).
    indented: bool,
}

impl Writer {
    fn newline(&mut self) {
        self.doc.push('\n');
        self.doc.push_str(&self.indent);
    }

    fn with_indent(&mut self, s: &str) {
        if !self.indented {
            self.newline();
        }
        self.doc.push_str(s);
        self.indented = false;
    }

    fn value(&mut self, v: &Json) {
        match v {
            Json::Null => self.doc.push_str("null"),
            Json::Int(i) => self.doc.push_str(&i.to_string()),
            Json::Real(r) => self.doc.push_str(&real_text(*r)),
            Json::Str(s) => self.doc.push_str(&quoted(s)),
            Json::Array(a) if a.is_empty() => self.doc.push_str("[]"),
            Json::Object(m) if m.is_empty() => self.doc.push_str("{}"),
            Json::Array(a) => {
                self.with_indent("[");
                self.indent.push('\t');
                for (k, child) in a.iter().enumerate() {
                    if !self.indented {
                        self.newline();
                    }
                    self.indented = true;
                    self.value(child);
                    self.indented = false;
                    if k + 1 != a.len() {
                        self.doc.push(',');
                    }
                }
                self.indent.pop();
                self.with_indent("]");
            }
            Json::Object(m) => {
                self.with_indent("{");
                self.indent.push('\t');
                for (k, (name, child)) in m.iter().enumerate() {
                    self.with_indent(&quoted(name));
                    self.doc.push_str(" : ");
                    self.value(child);
                    if k + 1 != m.len() {
                        self.doc.push(',');
                    }
                }
                self.indent.pop();
                self.with_indent("}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document the library wrote for this one (by hand, from its
    /// amalgamated source in nvbandwidth v0.8), byte for byte.
    #[test]
    fn styled_like_the_library() {
        let mut root = Json::object();
        let top = root.member("nvbandwidth");
        *top.member("version") = Json::Str("v0.8".into());
        *top.member("CUDA Runtime Version") = Json::Int(12080);
        *top.member("GPU Device list") = Json::Array(vec![
            Json::Str("0: A (00000000:01:00): (vm)".into()),
            Json::Str("1: B (00000000:02:00): (vm)".into()),
        ]);
        let mut case = Json::object();
        *case.member("name") = Json::Str("x".into());
        *case.member("status") = Json::Str("Passed".into());
        *case.member("sum") = Json::Real(95.460688476);
        *case.member("empty") = Json::Array(Vec::new());
        case.member("bandwidth_matrix").push(Json::Array(vec![Json::Str("1.5".into()), Json::Str("N/A".into())]));
        top.member("testcases").push(case);
        root.member("testcases");
        let want = "{\n\t\"nvbandwidth\" : \n\t{\n\t\t\"CUDA Runtime Version\" : 12080,\n\t\t\"GPU Device list\" : \n\t\t[\n\t\t\t\"0: A (00000000:01:00): (vm)\",\n\t\t\t\"1: B (00000000:02:00): (vm)\"\n\t\t],\n\t\t\"testcases\" : \n\t\t[\n\t\t\t{\n\t\t\t\t\"bandwidth_matrix\" : \n\t\t\t\t[\n\t\t\t\t\t[\n\t\t\t\t\t\t\"1.5\",\n\t\t\t\t\t\t\"N/A\"\n\t\t\t\t\t]\n\t\t\t\t],\n\t\t\t\t\"empty\" : [],\n\t\t\t\t\"name\" : \"x\",\n\t\t\t\t\"status\" : \"Passed\",\n\t\t\t\t\"sum\" : 95.460688476000001\n\t\t\t}\n\t\t],\n\t\t\"version\" : \"v0.8\"\n\t},\n\t\"testcases\" : null\n}\n";
        assert_eq!(root.styled(), want);
        assert_eq!(real_text(3.0), "3.0");
        assert_eq!(real_text(0.1), "0.10000000000000001");
    }
}
