/**
 * Shared configuration: the stage every resource is named for, and the tags they all carry.
 */

import { Parameter, defaultTags } from "@intentius/chant-lexicon-aws";

export const stage = new Parameter("String", {
  description: "Deployment stage",
  defaultValue: "dev",
  allowedValues: ["dev", "staging", "prod"],
});

export const tags = defaultTags([
  { Key: "managed-by", Value: "chant" },
]);
