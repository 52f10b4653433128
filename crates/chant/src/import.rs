//! `chant import`: argument wiring to the importers.

use std::path::Path;
use std::process::ExitCode;

use chant_core::session::Chant;

pub fn run(chant: &Chant, file: &Path, output: &Path, force: bool) -> ExitCode {
    let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let output = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::from(1)
    };
    let value = match chant_lexicons::import::read_template(&file) {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    // The project's lexicons when there is a project here, else every importer.
    let cwd = std::env::current_dir().unwrap_or_else(|_| output.clone());
    let lexicons = chant
        .locate(&cwd)
        .ok()
        .and_then(|p| p.lexicon_names().ok())
        .filter(|l| !l.is_empty())
        .unwrap_or_else(chant_lexicons::import::importers);
    let imported = match chant_lexicons::import::import(&value, &file, &lexicons) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    let (written, write_warnings) =
        match chant_lexicons::import::write(&output, &imported.files, force) {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
    for w in imported.warnings.iter().chain(&write_warnings) {
        eprintln!("warning: {w}");
    }
    println!("Detected lexicon: {}", imported.lexicon);
    if written.is_empty() {
        println!("No files generated.");
    } else {
        println!("Generated files:");
        for f in &written {
            println!("  {f}");
        }
    }
    ExitCode::SUCCESS
}
