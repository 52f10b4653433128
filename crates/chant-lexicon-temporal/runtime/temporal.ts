// @intentius/chant-lexicon-temporal: Ops and their builders. An Op is a declarable
// (`Temporal::Op`) whose props are its configuration; `chant run` and the Op tools execute it.
// The declarable classes of the catalog are appended by the engine.

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

function shortcut(fn: string, defaultProfile?: string) {
  return (args: Args = {}, options: StepOptions = {}) => activity(fn, args, { profile: options.profile ?? defaultProfile, outcomeAttribute: options.outcomeAttribute });
}

/** `sh -c <cmd>` in the project directory; `env` adds variables, `cwd` is relative to the project. */
export function shell(cmd: string, options: { env?: Record<string, string>; cwd?: string } & StepOptions = {}): ActivityStep {
  const args: Args = { cmd };
  if (options.cwd) args.cwd = options.cwd;
  if (options.env) args.env = options.env;
  return activity("shellCmd", args, { profile: options.profile, outcomeAttribute: options.outcomeAttribute });
}

export const build = shortcut("chantBuild");
export const kubectlApply = shortcut("kubectlApply", "longInfra");
export const k3dUp = shortcut("k3dUp");
export const k3dDown = shortcut("k3dDown");
export const flociUp = shortcut("flociUp");
export const awsApply = shortcut("awsApply");
export const azApply = shortcut("azApply");
export const gcpApply = shortcut("gcpApply");
export const httpCheck = shortcut("httpCheck");
export const lifecycleSnapshot = shortcut("lifecycleSnapshot");
export const policyGate = shortcut("policyGate", "policyCheck");
