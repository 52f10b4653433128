// @intentius/chant-lexicon-gitlab: the hand-written part of chant's GitLab CI runtime module.
// The declarable classes (Job, Default, Workflow, Image, Cache, …) are generated from the
// lexicon's catalog and appended to this module by the engine.

import { Composite, Tagged } from "@intentius/chant";

/** `!reference [job, key, …]`: reuse a section of another job or hidden template. */
export function reference(...path: string[]): Tagged {
  return new Tagged("!reference", path);
}

/** GitLab's predefined CI/CD variables, as `$NAME` strings. */
export const CI = Object.freeze({
  Builds: "$CI_BUILDS_DIR",
  CommitAuthor: "$CI_COMMIT_AUTHOR",
  CommitBeforeSha: "$CI_COMMIT_BEFORE_SHA",
  CommitBranch: "$CI_COMMIT_BRANCH",
  CommitDescription: "$CI_COMMIT_DESCRIPTION",
  CommitMessage: "$CI_COMMIT_MESSAGE",
  CommitRef: "$CI_COMMIT_REF_NAME",
  CommitRefProtected: "$CI_COMMIT_REF_PROTECTED",
  CommitRefSlug: "$CI_COMMIT_REF_SLUG",
  CommitSha: "$CI_COMMIT_SHA",
  CommitShortSha: "$CI_COMMIT_SHORT_SHA",
  CommitTag: "$CI_COMMIT_TAG",
  CommitTimestamp: "$CI_COMMIT_TIMESTAMP",
  CommitTitle: "$CI_COMMIT_TITLE",
  DefaultBranch: "$CI_DEFAULT_BRANCH",
  EnvironmentName: "$CI_ENVIRONMENT_NAME",
  EnvironmentSlug: "$CI_ENVIRONMENT_SLUG",
  EnvironmentUrl: "$CI_ENVIRONMENT_URL",
  JobId: "$CI_JOB_ID",
  JobName: "$CI_JOB_NAME",
  JobStage: "$CI_JOB_STAGE",
  JobToken: "$CI_JOB_TOKEN",
  MergeRequestIid: "$CI_MERGE_REQUEST_IID",
  MergeRequestSourceBranch: "$CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
  MergeRequestTargetBranch: "$CI_MERGE_REQUEST_TARGET_BRANCH_NAME",
  MergeRequestTitle: "$CI_MERGE_REQUEST_TITLE",
  PipelineId: "$CI_PIPELINE_ID",
  PipelineIid: "$CI_PIPELINE_IID",
  PipelineSource: "$CI_PIPELINE_SOURCE",
  ProjectDir: "$CI_PROJECT_DIR",
  ProjectId: "$CI_PROJECT_ID",
  ProjectName: "$CI_PROJECT_NAME",
  ProjectPath: "$CI_PROJECT_PATH",
  ProjectPathSlug: "$CI_PROJECT_PATH_SLUG",
  ProjectUrl: "$CI_PROJECT_URL",
  Registry: "$CI_REGISTRY",
  RegistryImage: "$CI_REGISTRY_IMAGE",
  RegistryPassword: "$CI_REGISTRY_PASSWORD",
  RegistryUser: "$CI_REGISTRY_USER",
  ServerHost: "$CI_SERVER_HOST",
  ServerUrl: "$CI_SERVER_URL",
});

type JobProps = Record<string, unknown>;

/** Overlays per-member overrides on a composite member's generated props. */
function overlay(base: JobProps, override?: JobProps): JobProps {
  return override ? { ...base, ...override } : base;
}

const nodeTooling = {
  npm: { paths: [".npm/"], lockfile: "package-lock.json", install: "npm ci", run: "npm run", variables: { npm_config_cache: `${CI.ProjectDir}/.npm/` } },
  pnpm: { paths: [".pnpm-store/"], lockfile: "pnpm-lock.yaml", install: "pnpm install --frozen-lockfile", run: "pnpm run", variables: undefined },
  bun: { paths: [".bun/install/cache"], lockfile: "bun.lock", install: "bun install --frozen-lockfile", run: "bun run", variables: undefined },
} as const;

export interface NodePipelineProps {
  nodeVersion?: string;
  packageManager?: "npm" | "pnpm" | "bun";
  buildScript?: string;
  testScript?: string;
  buildArtifactPaths?: string[];
  artifactExpiry?: string;
  installCommand?: string;
  defaults?: { defaults?: JobProps; build?: JobProps; test?: JobProps };
}

/** A Node.js pipeline: shared image and dependency cache, a build job and a test job. */
export const NodePipeline = Composite((p: NodePipelineProps) => {
  const tool = nodeTooling[p.packageManager ?? "npm"];
  const install = p.installCommand ?? tool.install;
  const image = new Image({ name: `node:${p.nodeVersion ?? "22"}-alpine` });
  const cache = new Cache({ key: { files: [tool.lockfile] }, paths: [...tool.paths], policy: "pull-push" });
  const withVariables = tool.variables ? { variables: tool.variables } : {};
  const defaults = new Default(overlay({ image, cache: [cache] }, p.defaults?.defaults));
  const build = new Job(
    overlay(
      {
        stage: "build",
        script: [install, `${tool.run} ${p.buildScript ?? "build"}`],
        artifacts: new Artifacts({ paths: p.buildArtifactPaths ?? ["dist/"], expire_in: p.artifactExpiry ?? "1 hour" }),
        ...withVariables,
      },
      p.defaults?.build,
    ),
  );
  const test = new Job(
    overlay(
      {
        stage: "test",
        script: [install, `${tool.run} ${p.testScript ?? "test"}`],
        artifacts: new Artifacts({ reports: { junit: "junit.xml" }, when: "always" }),
        ...withVariables,
      },
      p.defaults?.test,
    ),
  );
  return { defaults, build, test };
}, "NodePipeline");

export interface PythonPipelineProps {
  pythonVersion?: string;
  testCommand?: string;
  lintCommand?: string | null;
  requirementsFile?: string;
  usePoetry?: boolean;
  defaults?: { defaults?: JobProps; test?: JobProps; lint?: JobProps };
}

/** A Python pipeline: image, virtualenv and pip cache, a test job and (unless disabled) a lint job. */
export const PythonPipeline = Composite((p: PythonPipelineProps) => {
  const requirements = p.requirementsFile ?? "requirements.txt";
  const install = p.usePoetry
    ? ["pip install poetry", "poetry config virtualenvs.in-project true", "poetry install"]
    : ["python -m venv .venv", "source .venv/bin/activate", `pip install -r ${requirements}`];
  const cache = new Cache({ key: { files: [p.usePoetry ? "poetry.lock" : requirements] }, paths: [".pip-cache/", ".venv/"], policy: "pull-push" });
  const defaults = new Default(
    overlay({ image: new Image({ name: `python:${p.pythonVersion ?? "3.12"}-slim` }), cache: [cache], before_script: install }, p.defaults?.defaults),
  );
  const variables = { PIP_CACHE_DIR: `${CI.ProjectDir}/.pip-cache` };
  const test = new Job(
    overlay(
      {
        stage: "test",
        variables,
        script: ["source .venv/bin/activate", p.testCommand ?? "pytest --junitxml=report.xml --cov"],
        artifacts: new Artifacts({ reports: { junit: "report.xml" }, when: "always" }),
      },
      p.defaults?.test,
    ),
  );
  const lintCommand = p.lintCommand === undefined ? "ruff check ." : p.lintCommand;
  if (lintCommand === null) return { defaults, test };
  const lint = new Job(overlay({ stage: "test", variables, script: ["source .venv/bin/activate", lintCommand] }, p.defaults?.lint));
  return { defaults, test, lint };
}, "PythonPipeline");

export interface DockerBuildProps {
  stage?: string;
  tag?: string;
  dockerfile?: string;
  context?: string;
  registry?: string;
  image?: string;
  tagLatest?: boolean;
  buildArgs?: Record<string, string>;
  rules?: unknown[];
  dockerVersion?: string;
  defaults?: { build?: JobProps };
}

/** Builds and pushes a container image with Docker-in-Docker, optionally tagging `latest` on the default branch. */
export const DockerBuild = Composite((p: DockerBuildProps) => {
  const tag = p.tag ?? CI.CommitRefSlug;
  const image = p.image ?? CI.RegistryImage;
  const version = p.dockerVersion ?? "27";
  const args = Object.entries(p.buildArgs ?? {}).map(([k, v]) => `--build-arg ${k}=${v}`);
  const buildCommand = ["docker build", ...args, `-t ${image}:${tag}`, `-f ${p.dockerfile ?? "Dockerfile"}`, p.context ?? "."].join(" ");
  const script = [buildCommand, `docker push ${image}:${tag}`];
  if (p.tagLatest ?? true) {
    script.push(
      `if [ "${CI.CommitBranch}" = "${CI.DefaultBranch}" ]; then docker tag ${image}:${tag} ${image}:latest && docker push ${image}:latest; fi`,
    );
  }
  const build = new Job(
    overlay(
      {
        stage: p.stage ?? "build",
        image: new Image({ name: `docker:${version}-cli` }),
        services: [new Service({ name: `docker:${version}-dind`, alias: "docker" })],
        variables: { DOCKER_TLS_CERTDIR: "/certs" },
        before_script: [`docker login -u ${CI.RegistryUser} -p ${CI.RegistryPassword} ${p.registry ?? CI.Registry}`],
        script,
        ...(p.rules ? { rules: p.rules } : {}),
      },
      p.defaults?.build,
    ),
  );
  return { build };
}, "DockerBuild");

export interface ReviewAppProps {
  name: string;
  deployScript: string | string[];
  stopScript?: string | string[];
  urlPattern?: string;
  autoStopIn?: string;
  image?: unknown;
  stage?: string;
  defaults?: { deploy?: JobProps; stop?: JobProps };
}

/** A review environment per merge request: a deploy job and a manual stop job. */
export const ReviewApp = Composite((p: ReviewAppProps) => {
  const list = (s: string | string[]) => (Array.isArray(s) ? s : [s]);
  const stage = p.stage ?? "deploy";
  const withImage = p.image ? { image: p.image } : {};
  const environmentName = `review/${CI.CommitRefSlug}`;
  const deploy = new Job(
    overlay(
      {
        stage,
        ...withImage,
        environment: new Environment({
          name: environmentName,
          url: p.urlPattern ?? `https://${CI.EnvironmentSlug}.example.com`,
          auto_stop_in: p.autoStopIn ?? "1 week",
          on_stop: `${p.name}-stop`,
        }),
        rules: [new Rule({ if: CI.MergeRequestIid })],
        script: list(p.deployScript),
      },
      p.defaults?.deploy,
    ),
  );
  const stop = new Job(
    overlay(
      {
        stage,
        ...withImage,
        environment: new Environment({ name: environmentName, action: "stop" }),
        rules: [new Rule({ if: CI.MergeRequestIid, when: "manual" })],
        script: list(p.stopScript ?? 'echo "Stopping review app..."'),
      },
      p.defaults?.stop,
    ),
  );
  return { deploy, stop };
}, "ReviewApp");
