//! `chant lint`: argument wiring to the lint engine and its reporters.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use chant_core::model::Budget;
use chant_core::session::Chant;

pub enum Format {
    Stylish,
    Json,
    Sarif,
}

pub fn run(
    chant: &Chant,
    budget: &Budget,
    path: &Path,
    fix: bool,
    format: Format,
    only: &[String],
) -> ExitCode {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::from(1)
    };
    let project = match chant.locate(&path, budget) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    let setup = match chant_core::lint::setup(&chant.lexicons, &project, &path, only) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let linter = setup.linter();
    let result = if fix {
        match linter.fix(&setup.files) {
            Ok((result, changed)) => {
                for f in changed {
                    eprintln!("fixed {}", f.display());
                }
                result
            }
            Err(e) => return fail(format!("could not write the fixes: {e}")),
        }
    } else {
        linter.lint(&setup.files)
    };
    let text = match format {
        Format::Stylish => chant_lint::report::stylish(&result),
        Format::Json => chant_lint::report::json(&result),
        Format::Sarif => {
            chant_lint::report::sarif(&result, &setup.rules, env!("CARGO_PKG_VERSION"))
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    if chant_lint::report::failed(&result) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
