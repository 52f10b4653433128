//! The activities that drive one external tool (`kubectl`, `helm`, `k3d`, `docker`, `az`):
//! the tool's arguments made from the step's args, run when it is on PATH.

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::Value as Json;

use super::call::{arg, not_a_flag, optional, required, run_tool};

/// An activity that runs one tool with arguments made from the step's args.
pub struct Tool {
    pub name: &'static str,
    pub argv: fn(&ActivityCall<'_>) -> Result<Vec<String>, ActivityError>,
}

impl Activity for Tool {
    fn name(&self) -> &'static str {
        self.name
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let argv = (self.argv)(call)?;
        run_tool(call, self.name, &argv).map(Json::String)
    }
}

fn words(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn opt(
    out: &mut Vec<String>,
    call: &ActivityCall<'_>,
    key: &str,
    flag: &str,
) -> Result<(), ActivityError> {
    if let Some(v) = arg(call, key) {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        not_a_flag(&out[0], key, &v)?;
        out.extend([flag.to_owned(), v]);
    }
    Ok(())
}

fn kubectl_apply(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let manifest = required(call, "kubectlApply", "manifest")?;
    let mut a = words(&["kubectl", "apply", "-f", manifest]);
    opt(&mut a, call, "namespace", "-n")?;
    opt(&mut a, call, "context", "--context")?;
    Ok(a)
}

fn helm_install(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let name = required(call, "helmInstall", "name")?;
    let chart = required(call, "helmInstall", "chart")?;
    let mut a = words(&["helm", "upgrade", "--install", name, chart]);
    opt(&mut a, call, "values", "-f")?;
    if let Some(ns) = optional(call, "helmInstall", "namespace")? {
        a.extend(words(&["-n", ns, "--create-namespace"]));
    }
    opt(&mut a, call, "context", "--kube-context")?;
    Ok(a)
}

fn wait_for_ready(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let kind = required(call, "waitForReady", "kind")?;
    let name = required(call, "waitForReady", "name")?;
    let timeout = format!("--timeout={}s", (call.timeout_ms / 1000).max(1));
    let mut a = words(&[
        "kubectl",
        "wait",
        "--for=condition=Ready",
        &format!("{kind}/{name}"),
        &timeout,
    ]);
    opt(&mut a, call, "namespace", "-n")?;
    opt(&mut a, call, "context", "--context")?;
    Ok(a)
}

fn k3d_up(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let name = required(call, "k3dUp", "name")?;
    let mut a = words(&["k3d", "cluster", "create", name]);
    opt(&mut a, call, "servers", "--servers")?;
    opt(&mut a, call, "agents", "--agents")?;
    opt(&mut a, call, "image", "--image")?;
    for p in arg(call, "ports")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
    {
        not_a_flag("k3dUp", "ports", p)?;
        a.extend(words(&["-p", p]));
    }
    let flag = |key: &str| arg(call, key).and_then(Json::as_bool).unwrap_or(false);
    a.push(format!(
        "--kubeconfig-update-default={}",
        flag("updateDefaultKubeconfig")
    ));
    a.push(format!(
        "--kubeconfig-switch-context={}",
        flag("switchCurrentContext")
    ));
    Ok(a)
}

fn k3d_down(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    Ok(words(&[
        "k3d",
        "cluster",
        "delete",
        required(call, "k3dDown", "name")?,
    ]))
}

/// `docker run` of an emulator: `(default name, image, container port)`.
fn emulator_up(
    call: &ActivityCall<'_>,
    name: &str,
    image: &str,
    port: u16,
) -> Result<Vec<String>, ActivityError> {
    let name = optional(call, "emulator", "name")?.unwrap_or(name);
    let image = optional(call, "emulator", "image")?.unwrap_or(image);
    let host_port = arg(call, "port")
        .and_then(Json::as_u64)
        .unwrap_or(u64::from(port));
    Ok(words(&[
        "docker",
        "run",
        "-d",
        "--rm",
        "--name",
        name,
        "-p",
        &format!("{host_port}:{port}"),
        image,
    ]))
}

fn emulator_down(call: &ActivityCall<'_>, name: &str) -> Result<Vec<String>, ActivityError> {
    Ok(words(&[
        "docker",
        "rm",
        "-f",
        optional(call, "emulator", "name")?.unwrap_or(name),
    ]))
}

fn az_group_ensure(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let group = required(call, "azGroupEnsure", "resourceGroup")?;
    let location = optional(call, "azGroupEnsure", "location")?.unwrap_or("eastus");
    Ok(words(&[
        "az",
        "group",
        "create",
        "--name",
        group,
        "--location",
        location,
    ]))
}

fn az_group_delete(call: &ActivityCall<'_>) -> Result<Vec<String>, ActivityError> {
    let group = required(call, "azGroupDelete", "resourceGroup")?;
    Ok(words(&[
        "az",
        "group",
        "delete",
        "--name",
        group,
        "--yes",
        "--no-wait",
    ]))
}

pub static TOOLS: [Tool; 13] = [
    Tool {
        name: "kubectlApply",
        argv: kubectl_apply,
    },
    Tool {
        name: "helmInstall",
        argv: helm_install,
    },
    Tool {
        name: "waitForReady",
        argv: wait_for_ready,
    },
    Tool {
        name: "k3dUp",
        argv: k3d_up,
    },
    Tool {
        name: "k3dDown",
        argv: k3d_down,
    },
    Tool {
        name: "flociUp",
        argv: |c| emulator_up(c, "chant-floci", "floci/floci:latest", 4566),
    },
    Tool {
        name: "flociDown",
        argv: |c| emulator_down(c, "chant-floci"),
    },
    Tool {
        name: "flociAzUp",
        argv: |c| emulator_up(c, "chant-floci-az", "floci/floci-az:latest", 4577),
    },
    Tool {
        name: "flociAzDown",
        argv: |c| emulator_down(c, "chant-floci-az"),
    },
    Tool {
        name: "flociGcpUp",
        argv: |c| emulator_up(c, "chant-floci-gcp", "floci/floci-gcp:latest", 4588),
    },
    Tool {
        name: "flociGcpDown",
        argv: |c| emulator_down(c, "chant-floci-gcp"),
    },
    Tool {
        name: "azGroupEnsure",
        argv: az_group_ensure,
    },
    Tool {
        name: "azGroupDelete",
        argv: az_group_delete,
    },
];
