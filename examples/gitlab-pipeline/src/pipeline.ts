import { Job, Rule, CI } from "@intentius/chant-lexicon-gitlab";
import { nodeImage, npmCache, distArtifacts } from "./shared";

export const build = new Job({
  stage: "build",
  image: nodeImage,
  cache: npmCache,
  script: ["npm ci", "npm run build"],
  artifacts: distArtifacts,
  timeout: "15 minutes",
});

export const check = new Job({
  stage: "test",
  image: nodeImage,
  cache: npmCache,
  script: ["npm ci", "npm test"],
  timeout: "15 minutes",
});

export const deploy = new Job({
  stage: "deploy",
  image: nodeImage,
  script: ["./scripts/deploy.sh"],
  rules: [new Rule({ if: `${CI.CommitBranch} == ${CI.DefaultBranch}` })],
  retry: 2,
  timeout: "30 minutes",
});
