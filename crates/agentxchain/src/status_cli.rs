//! `status`: the governed run as the reference's CLI shows it — its `--json` object
//! (`axc_kernel::views::status`) or the same read for a person. A legacy (v3) project gets
//! the read model's report (`axc_core::read::status`).

use std::path::Path;
use std::process::ExitCode;

use axc_core::util::resolve_path;
use axc_kernel::views::status;

pub fn run(json: bool, dir: Option<&Path>) -> ExitCode {
    let start = resolve_path(dir.unwrap_or(Path::new(".")));
    let Some(root) = axc_core::config::find_root(&start) else {
        println!("No agentxchain.json found. Run `agentxchain init` first.");
        return ExitCode::FAILURE;
    };
    let mut warnings = Vec::new();
    let built = status::build(&root, std::time::SystemTime::now(), &mut warnings);
    for w in &warnings {
        eprintln!("{w}");
    }
    match built {
        Err(no) if no.legacy => crate::legacy_status(json, root),
        Err(no) => {
            if let Some(w) = &no.warning {
                eprintln!("{w}");
            }
            println!("{}", no.message);
            ExitCode::FAILURE
        }
        Ok(v) if json => {
            println!("{}", canon::to_pretty(&v));
            ExitCode::SUCCESS
        }
        Ok(v) => {
            print!("{}", crate::status_text::render(&v));
            ExitCode::SUCCESS
        }
    }
}
