//! Turns the committed surface snapshot (`data/aws.surface.json`) into static tables, so a
//! build looks a class up by binary search instead of parsing 2 MB of JSON in every process.
//!
//! The tables hold no pointers: every string is a span of one text, every list a span of one
//! array of string ids. A table of `&str`s would need a relocation per string when the
//! program loads (some 150,000 of them), which every process pays, aws project or not.

use std::collections::HashMap;
use std::fmt::Write as _;

#[derive(Default)]
struct Strings {
    text: String,
    spans: Vec<(u32, u32)>,
    ids: HashMap<String, u32>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.spans.len() as u32;
        self.spans.push((self.text.len() as u32, s.len() as u32));
        self.text.push_str(s);
        self.ids.insert(s.to_owned(), id);
        id
    }
}

fn main() {
    let path = "data/aws.surface.json";
    println!("cargo:rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).expect("data/aws.surface.json is readable");
    let surface: serde_json::Value = serde_json::from_str(&text).expect("the aws surface is JSON");
    let entries = surface["entries"]
        .as_object()
        .expect("the aws surface has entries");
    let mut strings = Strings::default();
    let mut list: Vec<u32> = Vec::new();
    let mut classes = String::new();
    let mut names: Vec<(String, usize)> = Vec::new();
    for (i, (name, e)) in entries.iter().enumerate() {
        names.push((name.clone(), i));
        let resource = e["kind"].as_str().unwrap_or("resource") == "resource";
        let taggable = e["taggable"].as_bool().unwrap_or(false);
        let items = |key: &str| -> Vec<String> {
            e[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut span = |values: Vec<(String, bool)>, strings: &mut Strings| -> (u32, u32) {
            let start = list.len() as u32;
            for (v, flag) in &values {
                list.push(strings.id(v) | if *flag { 1 << 31 } else { 0 });
            }
            (start, values.len() as u32)
        };
        let attrs = span(
            items("attrs").into_iter().map(|a| (a, false)).collect(),
            &mut strings,
        );
        let props = span(
            items("props")
                .into_iter()
                .map(|p| match p.rsplit_once(':') {
                    Some((n, r)) => (n.to_owned(), r == "true"),
                    None => (p, false),
                })
                .collect(),
            &mut strings,
        );
        let create_only = span(
            items("createOnly")
                .into_iter()
                .map(|a| (a, false))
                .collect(),
            &mut strings,
        );
        let name_id = strings.id(name);
        let type_id = strings.id(e["resourceType"].as_str().unwrap_or_default());
        let flags = u8::from(resource) | (u8::from(taggable) << 1);
        writeln!(
            classes,
            "Raw{{name:{name_id},resource_type:{type_id},flags:{flags},attrs:{attrs:?},props:{props:?},create_only:{create_only:?}}},"
        )
        .unwrap();
    }
    names.sort();
    let order: Vec<usize> = names.iter().map(|(_, i)| *i).collect();
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("catalog.txt"), &strings.text).unwrap();
    let mut out = String::new();
    writeln!(
        out,
        "static TEXT: &str = include_str!(concat!(env!(\"OUT_DIR\"), \"/catalog.txt\"));"
    )
    .unwrap();
    writeln!(
        out,
        "static SPANS: [(u32, u32); {}] = {:?};",
        strings.spans.len(),
        strings.spans
    )
    .unwrap();
    writeln!(out, "static LIST: [u32; {}] = {:?};", list.len(), list).unwrap();
    writeln!(out, "static RAW: [Raw; {}] = [\n{classes}];", entries.len()).unwrap();
    writeln!(out, "static BY_NAME: [u16; {}] = {order:?};", order.len()).unwrap();
    std::fs::write(out_dir.join("catalog.rs"), out).unwrap();
}
