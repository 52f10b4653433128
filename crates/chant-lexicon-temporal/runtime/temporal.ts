// @intentius/chant-lexicon-temporal: Ops and their builders. An Op is a declarable
// (`Temporal::Op`) whose props are its configuration; `chant run` and the Op tools execute it.
// The declarable classes of the catalog are appended by the engine.

import { Composite } from "@intentius/chant";

type Args = Record<string, unknown>;

export interface ActivityStep {
  kind: "activity";
  fn: string;
  args?: Args;
  profile?: string;
  outcomeAttribute?: { name: string; from?: string };
}

export interface GateStep {
  kind: "gate";
  gate: string;
  timeout?: string;
  description?: string;
  approval?: unknown;
  /** Only a signed approval (`chant approve --sign`, verified against `.chant/allowed_signers`) passes. */
  attested?: boolean;
}

export type Step = ActivityStep | GateStep;

export interface PhaseDefinition {
  name: string;
  steps: Step[];
  parallel?: true;
}

export interface OpConfig {
  name: string;
  overview: string;
  phases: PhaseDefinition[];
  taskQueue?: string;
  namespace?: string;
  depends?: string[];
  onFailure?: PhaseDefinition[];
  labels?: Record<string, string>;
  neverOverMcp?: true;
  schedule?: { cron: string; overlap?: "skip" };
}

/** Declares an Op; `taskQueue` defaults to its name. */
export function Op(config: OpConfig) {
  return new OpDeclaration({ ...config, taskQueue: config.taskQueue ?? config.name });
}

/** A phase: its steps run in order, or all at once with `{ parallel: true }`. */
export function phase(name: string, steps: Step[], options?: { parallel?: boolean }): PhaseDefinition {
  return options?.parallel ? { name, steps, parallel: true } : { name, steps };
}

/** A step running the named activity with `args`, under an activity profile. */
export function activity(fn: string, args?: Args, profile?: string | { profile?: string; outcomeAttribute?: { name: string; from?: string } }): ActivityStep {
  const step: ActivityStep = { kind: "activity", fn };
  if (args && Object.keys(args).length > 0) step.args = args;
  const p = typeof profile === "string" ? profile : profile?.profile;
  if (p) step.profile = p;
  if (typeof profile === "object" && profile?.outcomeAttribute) step.outcomeAttribute = profile.outcomeAttribute;
  return step;
}

/** A human gate: the run stops here until a person approves it (`chant approve <op> <gate>`). */
export function gate(name: string, options?: { timeout?: string; description?: string; approval?: unknown; attested?: boolean }): GateStep {
  const step: GateStep = { kind: "gate", gate: name };
  if (options?.timeout) step.timeout = options.timeout;
  if (options?.description) step.description = options.description;
  if (options?.approval) step.approval = options.approval;
  if (options?.attested === true) step.attested = true;
  return step;
}

type StepOptions = { profile?: string; outcomeAttribute?: { name: string; from?: string } };

/** Splits a `profile` (and `outcomeAttribute`) out of an options bag: the rest are the step's args. */
function takeProfile(opts: Args | undefined): { args: Args; options: StepOptions } {
  if (!opts) return { args: {}, options: {} };
  const { profile, outcomeAttribute, ...args } = opts as StepOptions & Args;
  return { args, options: { profile: profile as string | undefined, outcomeAttribute } };
}

function step(fn: string, args: Args, options: StepOptions, defaultProfile?: string): ActivityStep {
  return activity(fn, args, { profile: options.profile ?? defaultProfile, outcomeAttribute: options.outcomeAttribute });
}

/** A builder `(first, opts?)` for activity `fn`, its first argument under `key`. */
function keyed(fn: string, key: string, defaultProfile?: string) {
  return (first: unknown, opts?: Args): ActivityStep => {
    const { args, options } = takeProfile(opts);
    return step(fn, { [key]: first, ...args }, options, defaultProfile);
  };
}

/** A builder `(opts?)` for activity `fn`. */
function optsOnly(fn: string, defaultProfile?: string) {
  return (opts?: Args): ActivityStep => {
    const { args, options } = takeProfile(opts);
    return step(fn, args, options, defaultProfile);
  };
}

/** `sh -c <cmd>` in the project directory; `env` adds variables, `cwd` is relative to the project. */
export function shell(cmd: string, options: { env?: Record<string, string>; cwd?: string } & StepOptions = {}): ActivityStep {
  const args: Args = { cmd };
  if (options.cwd) args.cwd = options.cwd;
  if (options.env) args.env = options.env;
  return activity("shellCmd", args, { profile: options.profile, outcomeAttribute: options.outcomeAttribute });
}

/** Builds the chant project at `path` (relative to the repository): `opts.script` names its package.json script (default `build`). */
export const build = keyed("chantBuild", "path");
/** `kubectl apply -f <manifest>`. */
export const kubectlApply = keyed("kubectlApply", "manifest", "longInfra");
/** `helm upgrade --install <name> <chart>`. */
export function helmInstall(name: string, chart: string, opts?: Args): ActivityStep {
  const { args, options } = takeProfile(opts);
  return step("helmInstall", { name, chart, ...args }, options, "longInfra");
}
/** Waits until a deployed stack is ready. */
export const waitForStack = keyed("waitForStack", "name", "k8sWait");
/** Waits until a Kubernetes resource reports ready. */
export function waitForReady(kind: string, name: string, opts?: Args): ActivityStep {
  const { args, options } = takeProfile(opts);
  return step("waitForReady", { kind, name, ...args }, options, "k8sWait");
}
/** Triggers a GitLab pipeline and waits for it. */
export const gitlabPipeline = keyed("gitlabPipeline", "name", "longInfra");
/** Records a lifecycle snapshot of `env`. */
export function lifecycleSnapshot(env: string): ActivityStep {
  return activity("lifecycleSnapshot", { env });
}
/** Tears down what the chant project at `path` deployed. */
export function teardown(path: string): ActivityStep {
  return activity("chantTeardown", { path }, "longInfra");
}
export const k3dUp = keyed("k3dUp", "name", "longInfra");
export const k3dDown = keyed("k3dDown", "name", "fastIdempotent");
export const flociUp = optsOnly("flociUp", "longInfra");
export const flociDown = optsOnly("flociDown", "fastIdempotent");
export const flociAzUp = optsOnly("flociAzUp", "longInfra");
export const flociAzDown = optsOnly("flociAzDown", "fastIdempotent");
export const flociGcpUp = optsOnly("flociGcpUp", "longInfra");
export const flociGcpDown = optsOnly("flociGcpDown", "fastIdempotent");
/** Checks that `url` answers (any 2xx, or `status`), its body holding `contains` when given. */
export const httpCheck = keyed("httpCheck", "url", "fastIdempotent");
export const azGroupEnsure = keyed("azGroupEnsure", "resourceGroup", "fastIdempotent");
export const azGroupDelete = keyed("azGroupDelete", "resourceGroup", "fastIdempotent");
export const azApply = keyed("azApply", "templatePath", "longInfra");
export const azDelete = keyed("azDelete", "templatePath", "longInfra");
export const awsApply = keyed("awsApply", "templatePath", "longInfra");
export const awsDelete = keyed("awsDelete", "templatePath", "longInfra");
export const gcpApply = keyed("gcpApply", "manifestPath", "longInfra");
export const gcpDelete = keyed("gcpDelete", "manifestPath", "longInfra");
/** Builds the project at `path` (default `.`) and checks it against its policies. */
export function policyGate(opts?: { env?: string; path?: string }): ActivityStep {
  return activity("policyGate", { path: opts?.path ?? ".", ...(opts?.env ? { env: opts.env } : {}) }, "policyCheck");
}

/** A local dev server (`temporal server start-dev`) and its namespace. */
export const TemporalDevStack = Composite((config: { version?: string; port?: number; uiPort?: number; namespace?: string; retention?: string; description?: string } = {}) => {
  const server = new TemporalServer({ mode: "dev", version: config.version, port: config.port, uiPort: config.uiPort });
  const ns = new TemporalNamespace({
    name: config.namespace ?? "default",
    retention: config.retention ?? "7d",
    ...(config.description ? { description: config.description } : {}),
  });
  return { server, ns };
}, "TemporalDevStack");

/** A Temporal Cloud namespace and its search attributes (the server is Temporal Cloud's). */
export const TemporalCloudStack = Composite((config: { namespace: string; retention?: string; description?: string; searchAttributes?: Array<{ name: string; type: string }> }) => {
  const ns = new TemporalNamespace({
    name: config.namespace,
    retention: config.retention ?? "30d",
    ...(config.description ? { description: config.description } : {}),
  });
  const searchAttributes = (config.searchAttributes ?? []).map(({ name, type }) => new SearchAttribute({ name, type, namespace: config.namespace }));
  return { ns, searchAttributes };
}, "TemporalCloudStack");

function kebabToCamel(s: string): string {
  return s.replace(/-([a-z])/g, (_: string, c: string) => c.toUpperCase());
}

function scheduleFor(name: string, cron: string, taskQueue: string) {
  return new TemporalSchedule({
    scheduleId: `${name}-schedule`,
    spec: { cronExpressions: [cron] },
    action: { workflowType: kebabToCamel(name) + "Workflow", taskQueue },
  });
}

function driftStep(env: string, live: boolean): ActivityStep {
  return { kind: "activity", fn: "lifecycleDiff", args: { env, live }, outcomeAttribute: { name: "Drift", from: "drifted" } };
}

/** An Op applying declared source to `env` (code → cloud): build, plan, an optional gate, apply, and a rollback. */
export function ApplyOp(config: {
  name: string; env: string; target?: string; output?: string; path?: string; delete?: string;
  gate?: { signalName?: string; timeout?: string; description?: string };
  compensate?: boolean | { command?: string }; forceConflicts?: boolean; taskQueue?: string;
}) {
  const taskQueue = config.taskQueue ?? config.name;
  const target = config.target ?? "kubectl";
  const output = config.output ?? (target === "kubectl" || target === "kustomize" ? "dist" : "template.json");
  const deleteMode = config.delete ?? "never";
  const gated = deleteMode === "gated" || config.gate !== undefined;
  const phases: PhaseDefinition[] = [
    phase("Build", [activity("chantBuild", { path: config.path ?? "." })]),
    phase("Plan", [driftStep(config.env, true)]),
  ];
  if (gated) {
    phases.push(phase("Approve", [gate(config.gate?.signalName ?? `approve-${config.name}`, {
      ...(config.gate?.timeout ? { timeout: config.gate.timeout } : {}),
      description: config.gate?.description ?? `Approve apply to ${config.env} (delete mode: ${deleteMode})`,
    })]));
  }
  phases.push(phase("Apply", [activity("nativeApply", {
    target, env: config.env, output, deleteMode,
    ...(config.forceConflicts !== undefined ? { forceConflicts: config.forceConflicts } : {}),
  }, "longInfra")]));
  const compensate = config.compensate === undefined ? deleteMode !== "never" : config.compensate !== false;
  const command = typeof config.compensate === "object" ? config.compensate.command : undefined;
  const op = Op({
    name: config.name,
    overview: `Apply declared source to the ${config.env} environment (code → cloud)`,
    taskQueue,
    searchAttributes: { Apply: "true", Env: config.env },
    phases,
    ...(compensate ? { onFailure: [phase("Rollback", [activity("compensateApply", { target, env: config.env, ...(command ? { command } : {}) })])] } : {}),
  } as OpConfig);
  return { op };
}

/** An Op that snapshots and diffs `env` on a schedule, and that schedule. */
export function WatchOp(config: { name: string; env: string; schedule: string; taskQueue?: string; live?: boolean }) {
  const taskQueue = config.taskQueue ?? config.name;
  const op = Op({
    name: config.name,
    overview: `Periodically snapshot and diff the ${config.env} environment`,
    taskQueue,
    searchAttributes: { Watch: "true", Env: config.env },
    phases: [
      phase("Snapshot", [activity("lifecycleSnapshot", { env: config.env })]),
      phase("Diff", [driftStep(config.env, config.live ?? true)]),
    ],
  } as OpConfig);
  return { op, schedule: scheduleFor(config.name, config.schedule, taskQueue) };
}

/** An Op reconciling `env` into source (cloud → code), on a schedule when given. */
export function ReconcileOp(config: { name: string; env: string; schedule?: string; onDrift?: string; scope?: { owned?: boolean }; taskQueue?: string }) {
  const taskQueue = config.taskQueue ?? config.name;
  const onDrift = config.onDrift ?? "pull-request";
  const outcome = onDrift === "pull-request" ? { name: "PR", from: "prUrl" } : onDrift === "issue" ? { name: "Issue", from: "issueUrl" } : undefined;
  const op = Op({
    name: config.name,
    overview: `Reconcile the ${config.env} environment into source (cloud → code)`,
    taskQueue,
    searchAttributes: { Reconcile: "true", Env: config.env },
    phases: [
      phase("Snapshot", [activity("lifecycleSnapshot", { env: config.env })]),
      phase("Plan", [driftStep(config.env, true)]),
      phase("Reconcile", [{ kind: "activity", fn: "reconcilePr", args: { env: config.env, mode: onDrift, owned: config.scope?.owned ?? false }, ...(outcome ? { outcomeAttribute: outcome } : {}) }]),
    ],
  } as OpConfig);
  if (!config.schedule) return { op };
  return { op, schedule: scheduleFor(config.name, config.schedule, taskQueue) };
}

function auditOp(fn: string, args: Args, overview: string, surface: string) {
  return (config: { name: string; schedule?: string; onFinding?: string; taskQueue?: string } & Args) => {
    const taskQueue = (config.taskQueue as string | undefined) ?? config.name;
    const op = Op({
      name: config.name,
      overview,
      taskQueue,
      searchAttributes: { Audit: "true", Surface: surface },
      phases: [phase("Audit", [{ kind: "activity", fn, args: { ...args, ...pick(config, Object.keys(args)), mode: config.onFinding ?? "report" }, outcomeAttribute: { name: "Findings", from: "findings" } }])],
    } as OpConfig);
    if (!config.schedule) return { op };
    return { op, schedule: scheduleFor(config.name, config.schedule, taskQueue) };
  };
}

function pick(from: Args, keys: string[]): Args {
  const out: Args = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}

/** An Op resolving workflow action references against live upstreams (supply-chain drift). */
export const WorkflowAuditOp = auditOp("workflowSupplyChainAudit", { workflowsDir: ".github/workflows" }, "Resolve workflow action references against live upstreams and report supply-chain drift", "github-workflows");
/** An Op resolving pipeline include/component/image references against live upstreams. */
export const PipelineAuditOp = auditOp("pipelineSupplyChainAudit", { pipelineFile: ".gitlab-ci.yml" }, "Resolve pipeline include/component/image references against live upstreams and report drift", "gitlab-pipeline");

/** The lexicons whose upstream spec a LexiconUpgradeOp can track. */
export const IN_SCOPE_LEXICONS = ["k8s", "gcp", "docker", "gitlab", "aws", "azure", "github", "fly", "cedar"] as const;

/** An Op detecting a newer upstream spec for `lexicon`, regenerating and validating it. */
export function LexiconUpgradeOp(config: { lexicon: string; name?: string; schedule?: string; lexiconDir?: string; onFinding?: string; taskQueue?: string }) {
  if (!(IN_SCOPE_LEXICONS as readonly string[]).includes(config.lexicon)) {
    throw new Error(`LexiconUpgradeOp: "${config.lexicon}" is not in scope. In-scope lexicons: ${IN_SCOPE_LEXICONS.join(", ")} (helm, temporal, forgejo have no upstream spec).`);
  }
  const name = config.name ?? `${config.lexicon}-upgrade`;
  const taskQueue = config.taskQueue ?? name;
  const op = Op({
    name,
    overview: "Detect a newer upstream spec for the lexicon, regen + validate, and surface the API-surface delta",
    taskQueue,
    searchAttributes: { Upgrade: "true", Lexicon: config.lexicon },
    phases: [phase("Upgrade", [{ kind: "activity", fn: "lexiconUpgrade", args: { lexicon: config.lexicon, ...(config.lexiconDir ? { lexiconDir: config.lexiconDir } : {}), mode: config.onFinding ?? "report" }, outcomeAttribute: { name: "HasUpgrade", from: "hasUpgrade" } }])],
  } as OpConfig);
  if (!config.schedule) return { op };
  return { op, schedule: scheduleFor(name, config.schedule, taskQueue) };
}

/** The activity profiles as Temporal workers take them (the local runtime's own table agrees on timeouts and attempts). */
export const TEMPORAL_ACTIVITY_PROFILES = {
  fastIdempotent: { startToCloseTimeout: "5m", retry: { maximumAttempts: 3, initialInterval: "5s", backoffCoefficient: 2 } },
  longInfra: { startToCloseTimeout: "20m", heartbeatTimeout: "60s", retry: { maximumAttempts: 3, initialInterval: "30s", backoffCoefficient: 2 } },
  k8sWait: { startToCloseTimeout: "15m", heartbeatTimeout: "60s", retry: { maximumAttempts: 3, initialInterval: "10s", backoffCoefficient: 2, nonRetryableErrorTypes: ["ReadinessFailedError"] } },
  humanGate: { startToCloseTimeout: "48h", heartbeatTimeout: "90s", retry: { maximumAttempts: 1 } },
  argoSync: { startToCloseTimeout: "30m", heartbeatTimeout: "60s", retry: { maximumAttempts: 5, initialInterval: "10s", backoffCoefficient: 2, maximumInterval: "1m", nonRetryableErrorTypes: ["ArgoSyncFailedError"] } },
  policyCheck: { startToCloseTimeout: "5m", retry: { maximumAttempts: 1 } },
} as const;

const DURATION_UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** A chant duration ("7d", "1h30m", "90") in seconds; `undefined` when it is none. */
export function parseDurationSeconds(input: string): number | undefined {
  const trimmed = input.trim();
  if (trimmed === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  let total = 0;
  let matched = false;
  for (const m of trimmed.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/gi)) {
    matched = true;
    total += Number(m[1]) * DURATION_UNIT_SECONDS[m[2].toLowerCase()];
  }
  return matched ? total : undefined;
}

/** Seconds as one-unit duration text, the largest whole unit first. */
export function formatDurationSeconds(totalSeconds: number): string {
  if (totalSeconds === 0) return "0s";
  if (Number.isInteger(totalSeconds)) {
    if (totalSeconds % 86400 === 0) return `${totalSeconds / 86400}d`;
    if (totalSeconds % 3600 === 0) return `${totalSeconds / 3600}h`;
    if (totalSeconds % 60 === 0) return `${totalSeconds / 60}m`;
    return `${totalSeconds}s`;
  }
  return `${Math.round(totalSeconds * 1000)}ms`;
}

/** The declared duration when it means `liveSeconds`, else `liveSeconds` formatted. */
export function reconcileDuration(declared: unknown, liveSeconds: number): string {
  if (typeof declared === "string") {
    const d = parseDurationSeconds(declared);
    if (d !== undefined && Math.abs(d - liveSeconds) < 0.001) return declared;
  }
  return formatDurationSeconds(liveSeconds);
}

/** What a namespace is when a field is not declared (live values equal to these are no drift). */
export const TEMPORAL_NAMESPACE_DEFAULTS: Record<string, unknown> = {
  retention: "7d", description: "", ownerEmail: "", isGlobalNamespace: false,
  historyArchivalState: "Disabled", historyArchivalUri: "", visibilityArchivalState: "Disabled", visibilityArchivalUri: "",
};

/** The same for a schedule's optional policy and state fields. */
export const TEMPORAL_SCHEDULE_DEFAULTS: Record<string, unknown> = {
  state: { paused: false, note: "" }, "policies.pauseOnFailure": false, "state.paused": false, "state.note": "",
};

const TEMPORAL_DEFAULTS_BY_TYPE: Record<string, Record<string, unknown>> = {
  "Temporal::Namespace": TEMPORAL_NAMESPACE_DEFAULTS,
  "Temporal::Schedule": TEMPORAL_SCHEDULE_DEFAULTS,
};

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v) ?? "";
}

function lastSegment(pattern: string): string {
  const bare = pattern.replace(/\[\]$/, "");
  const dot = bare.lastIndexOf(".");
  return dot === -1 ? bare : bare.slice(dot + 1);
}

/**
 * The temporal lexicon's noise rules for comparing a declared tree with a live one: `prune`
 * drops a live-only node whose value is the type's default (so an undeclared field at rest is
 * no drift), `orderKey` sorts the set-valued lists (`cronExpressions`, `intervals`,
 * `nonRetryableErrorTypes`) so their order is no drift either; `args` keeps its order.
 */
export const temporalDeepNormalizationHooks = {
  prune(node: { side: string; counterpart: string; entityType: string; pattern: string; value: unknown }): boolean {
    if (node.side !== "live" || node.counterpart !== "absent") return false;
    const defaults = TEMPORAL_DEFAULTS_BY_TYPE[node.entityType];
    if (!defaults || !Object.prototype.hasOwnProperty.call(defaults, node.pattern)) return false;
    const d = defaults[node.pattern];
    return d === node.value || (typeof d === typeof node.value && canonicalJson(d) === canonicalJson(node.value));
  },
  orderKey(element: { pattern: string; element: unknown }): string | undefined {
    const name = lastSegment(element.pattern);
    const el = element.element;
    if (name === "cronExpressions" || name === "nonRetryableErrorTypes") return typeof el === "string" ? el : canonicalJson(el);
    if (name === "intervals") return canonicalJson(el);
    return undefined;
  },
};
