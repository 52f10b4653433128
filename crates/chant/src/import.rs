//! `chant import`: argument wiring to the importers.

use std::path::Path;
use std::process::ExitCode;

use chant_core::model::Budget;
use chant_core::session::Chant;

pub fn run(chant: &Chant, budget: &Budget, file: &Path, output: &Path, force: bool) -> ExitCode {
    let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let output = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::from(1)
    };
    // The project's lexicons when there is a project here, else every importer.
    let cwd = std::env::current_dir().unwrap_or_else(|_| output.clone());
    let lexicons = chant
        .locate(&cwd, budget)
        .ok()
        .and_then(|p| p.lexicon_names().ok())
        .unwrap_or_default();
    let report =
        match chant_core::import::import_file(&chant.lexicons, &file, &output, &lexicons, force) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    println!("Detected lexicon: {}", report.lexicon);
    if report.written.is_empty() {
        println!("No files generated.");
    } else {
        println!("Generated files:");
        for f in &report.written {
            println!("  {f}");
        }
    }
    ExitCode::SUCCESS
}
