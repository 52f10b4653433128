import { DockerBuild } from "@intentius/chant-lexicon-gitlab";

export const image = DockerBuild({
  dockerfile: "Dockerfile",
  tagLatest: true,
});
