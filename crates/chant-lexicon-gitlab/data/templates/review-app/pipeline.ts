import { ReviewApp } from "@intentius/chant-lexicon-gitlab";

export const review = ReviewApp({
  name: "review",
  deployScript: "./deploy-review.sh",
});
