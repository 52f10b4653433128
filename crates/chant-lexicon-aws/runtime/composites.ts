// @intentius/chant-lexicon-aws composites: factories over the catalog classes.

import { Composite } from "@intentius/chant";
