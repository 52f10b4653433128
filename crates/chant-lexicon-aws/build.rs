//! Turns the committed surface snapshot (`data/aws.surface.json`) into static tables, so a
//! build looks a class up by binary search instead of parsing 2 MB of JSON in every process.

use std::fmt::Write as _;

fn main() {
    let path = "data/aws.surface.json";
    println!("cargo:rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).expect("data/aws.surface.json is readable");
    let surface: serde_json::Value = serde_json::from_str(&text).expect("the aws surface is JSON");
    let entries = surface["entries"]
        .as_object()
        .expect("the aws surface has entries");
    let mut out = String::new();
    writeln!(out, "pub static CLASSES: &[Class] = &[").unwrap();
    let mut names: Vec<(&str, usize)> = Vec::new();
    for (i, (name, e)) in entries.iter().enumerate() {
        names.push((name.as_str(), i));
        let resource = e["kind"].as_str().unwrap_or("resource") == "resource";
        let strings = |key: &str| -> Vec<String> {
            e[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let attrs = strings("attrs");
        let props: Vec<(String, bool)> = strings("props")
            .into_iter()
            .map(|p| match p.rsplit_once(':') {
                Some((n, r)) => (n.to_owned(), r == "true"),
                None => (p, false),
            })
            .collect();
        let create_only = strings("createOnly");
        writeln!(
            out,
            "Class{{name:{name:?},resource_type:{:?},resource:{resource},taggable:{},attrs:&{attrs:?},props:&{props:?},create_only:&{create_only:?}}},",
            e["resourceType"].as_str().unwrap_or_default(),
            e["taggable"].as_bool().unwrap_or(false),
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
    names.sort_by(|a, b| a.0.cmp(b.0));
    let order: Vec<usize> = names.iter().map(|(_, i)| *i).collect();
    writeln!(out, "pub static BY_NAME: &[u16] = &{order:?};").unwrap();
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("catalog.rs");
    std::fs::write(dest, out).unwrap();
}
