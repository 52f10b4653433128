// @intentius/chant: the core runtime module chant embeds. Declarables register themselves here;
// the engine reads the registry and the modules' exports through __chant_encode / __chant_dump.

type Props = Record<string, unknown>;

const REGISTRY: Declarable[] = [];
const REGISTRY_PROPS: unknown[] = [];
const REGISTRY_ATTRIBUTES: unknown[] = [];

export type DeclarableKind = "resource" | "property" | "output";

/** Marks a class's instances for the engine: a string kind on the prototype. */
function mark(target: object, kind: string) {
  Object.defineProperty(target, "__chant", { value: kind, enumerable: false });
}

export class Declarable {
  declare readonly lexicon: string;
  declare readonly entityType: string;
  declare readonly kind: DeclarableKind;
  declare readonly className: string;

  constructor(props: Props, attributes?: unknown) {
    // One hidden own property per instance (its registry index); the rest lives in the registry
    // and, for what all instances of a class share, on the prototype.
    Object.defineProperty(this, "__chant", { value: REGISTRY.length, enumerable: false });
    REGISTRY.push(this);
    REGISTRY_PROPS.push(props ?? {});
    REGISTRY_ATTRIBUTES.push(attributes);
  }

  get props(): Props {
    return REGISTRY_PROPS[(this as unknown as { __chant: number }).__chant] as Props;
  }

  get attributes(): unknown {
    return REGISTRY_ATTRIBUTES[(this as unknown as { __chant: number }).__chant];
  }

  get Ref(): this {
    return this;
  }

  /** A declarable is referenced as a value, never spliced into text. */
  toString(): string {
    throw new Error(
      `a ${this.className ?? "declarable"} is not text — use it as a value (its Ref), or inside a Sub\`…\` template (aws)`,
    );
  }
}

/** Sets what every instance of a declarable class shares: kind, lexicon, type and class name. */
function describe(target: { prototype: object }, kind: DeclarableKind, lexicon: string, entityType: string, className: string) {
  const info = [kind, lexicon, entityType, className];
  Object.defineProperty(target.prototype, "__chantInfo", { value: info, enumerable: false });
  for (const [key, value] of [["kind", kind], ["lexicon", lexicon], ["entityType", entityType], ["className", className]]) {
    Object.defineProperty(target.prototype, key, { value, enumerable: false });
  }
}

export class AttrRef {
  constructor(readonly parent: Declarable, readonly attribute: string) {}
  /** A reference has no text of its own: `${bucket.Arn}` in a plain template literal, or `+`, would lose it. */
  toString(): string {
    throw new Error(
      `the attribute ${this.attribute} is a reference, not text — put it in a Sub\`…\` template (aws), not a plain template literal or +`,
    );
  }
}
mark(AttrRef.prototype, "attr");

/** A value with a YAML-style tag, e.g. GitLab's `!reference [job, key]`. */
export class Tagged {
  constructor(readonly tag: string, readonly value: unknown) {}
}
mark(Tagged.prototype, "tagged");

/** A lexicon intrinsic such as `{"Fn::Sub": …}`, rendered by its lexicon's serializer. */
export class Intrinsic {
  constructor(readonly name: string, readonly args: unknown) {}
  /** An intrinsic is computed at deploy time: it has no text to splice into a plain string. */
  toString(): string {
    throw new Error(
      `${this.name} is computed when the template is deployed, not text — put it in a Sub\`…\` template (aws), not a plain template literal or +`,
    );
  }
}
mark(Intrinsic.prototype, "intrinsic");

export class CompositeInstance {
  constructor(readonly compositeName: string, readonly members: Record<string, unknown>) {
    Object.assign(this, members);
  }
}
mark(CompositeInstance.prototype, "composite");

export type CompositeDefinition<P> = ((props: P) => CompositeInstance) & { compositeName: string };

export function Composite<P>(factory: (props: P) => Record<string, unknown>, name = "anonymous"): CompositeDefinition<P> {
  const definition = ((props: P) => new CompositeInstance(name, factory(props))) as CompositeDefinition<P>;
  Object.defineProperty(definition, "compositeName", { value: name });
  return definition;
}

export type OutputOptions = { lexicon?: string; description?: unknown; export?: unknown; condition?: unknown };

function isPlainObject(v: unknown): v is Props {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * `base` with `overrides` laid over it: plain objects merge key by key, anything else (arrays,
 * declarables, intrinsics) is replaced; an `undefined` override keeps the base value.
 */
export function mergeDefaults<T extends Props>(base: T, overrides?: Partial<T>): T {
  if (!isPlainObject(overrides)) return base;
  const out: Props = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? mergeDefaults(current, value) : value;
  }
  return out as T;
}

/** A composite whose props default to `defaults` (what a call passes wins). */
export function withDefaults<P>(definition: CompositeDefinition<P>, defaults: Partial<P>): CompositeDefinition<P> {
  const wrapped = ((props: P) => definition({ ...defaults, ...props } as P)) as CompositeDefinition<P>;
  Object.defineProperty(wrapped, "compositeName", { value: definition.compositeName });
  return wrapped;
}

/**
 * An output of the lexicon that produces it (`ref`'s, or `options.lexicon`). It belongs to no
 * lexicon itself (explain lists it under `unknown`): its producer is in its props.
 */
export class LexiconOutput extends Declarable {
  /** `name` undefined: the output is named by the export that holds it. */
  constructor(ref: unknown, name: string | undefined, options: OutputOptions = {}) {
    if (name !== undefined && (typeof name !== "string" || name === "")) {
      throw new Error("output(ref, name): name must be a non-empty string");
    }
    const lexicon = options.lexicon ?? (ref as AttrRef)?.parent?.lexicon ?? "";
    super({ ref, name, lexicon, description: options.description, export: options.export, condition: options.condition });
    const info = ["output", "", "Output", "Output"];
    Object.defineProperty(this, "__chantInfo", { value: info, enumerable: false });
  }
}

export function output(ref: unknown, name: string, options?: OutputOptions): LexiconOutput {
  return new LexiconOutput(ref, name, options);
}

/** Makes a declarable class for a catalog entry. */
export function declarableClass(lexicon: string, entityType: string, className: string, kind: DeclarableKind, attrs: string[]) {
  const C = attrs.length
    ? class extends Declarable {
        constructor(props: Props = {}, attributes?: unknown) {
          super(props, attributes);
          for (const a of attrs) (this as Record<string, unknown>)[a] = new AttrRef(this, a);
        }
      }
    : class extends Declarable {};
  Object.defineProperty(C, "name", { value: className });
  describe(C, kind, lexicon, entityType, className);
  return C;
}

export function isDeclarable(value: unknown): value is Declarable {
  return value instanceof Declarable;
}

export type ChantConfig = {
  lexicons?: string[];
  [key: string]: unknown;
};

// ---- for the engine ----

/** Every declarable created so far, in creation order (the engine reads props from here). */
export function __chant_registry(): [Declarable[], unknown[], unknown[]] {
  return [REGISTRY, REGISTRY_PROPS, REGISTRY_ATTRIBUTES];
}
