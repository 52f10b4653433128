import { Image, Cache, Artifacts } from "@intentius/chant-lexicon-gitlab";

export const nodeImage = new Image({ name: "node:22-alpine" });

export const npmCache = new Cache({
  key: { files: ["package-lock.json"] },
  paths: [".npm/"],
  policy: "pull-push",
});

export const distArtifacts = new Artifacts({ paths: ["dist/"], expire_in: "1 day" });
