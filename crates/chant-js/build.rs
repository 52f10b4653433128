//! Compiles the sandbox prelude (`runtime/prelude.js`) to QuickJS bytecode, so that no
//! evaluation has to parse it: it runs before every evaluation, and parsing it was a fifth of
//! `chant serve mcp`'s start-up. The runtime falls back to the source if this writes nothing.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=runtime/prelude.js");
    let source = std::fs::read_to_string("runtime/prelude.js").expect("runtime/prelude.js");
    let bytes = (|| -> rquickjs::Result<Vec<u8>> {
        let runtime = rquickjs::Runtime::new()?;
        let context = rquickjs::Context::full(&runtime)?;
        context.with(|ctx| {
            rquickjs::Module::declare(ctx, "chant:prelude", source.as_str())?
                .write(rquickjs::WriteOptions::default())
        })
    })()
    .unwrap_or_default();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("prelude.qbc");
    std::fs::write(out, bytes).expect("write prelude.qbc");
}
