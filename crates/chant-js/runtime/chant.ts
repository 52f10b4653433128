// @intentius/chant: the core runtime module chant embeds. Declarables register themselves here;
// the engine reads the registry and the modules' exports through __chant_encode / __chant_dump.

type Props = Record<string, unknown>;

const REGISTRY: Declarable[] = [];
const ID = Symbol("chant.id");

export type DeclarableKind = "resource" | "property" | "output";

export class Declarable {
  declare readonly lexicon: string;
  declare readonly entityType: string;
  declare readonly kind: DeclarableKind;
  declare readonly props: Props;
  declare readonly attributes: unknown;
  declare readonly className: string;

  constructor(kind: DeclarableKind, lexicon: string, entityType: string, className: string, props: Props, attributes?: unknown) {
    const hidden = (key: string | symbol, value: unknown) =>
      Object.defineProperty(this, key, { value, enumerable: false, writable: false, configurable: false });
    hidden("kind", kind);
    hidden("lexicon", lexicon);
    hidden("entityType", entityType);
    hidden("className", className);
    hidden("props", props ?? {});
    hidden("attributes", attributes);
    hidden(ID, REGISTRY.length);
    REGISTRY.push(this);
  }

  get Ref(): this {
    return this;
  }
}

export class AttrRef {
  constructor(readonly parent: Declarable, readonly attribute: string) {}
  toString(): string {
    return `\${${this.attribute}}`;
  }
}

/** A value with a YAML-style tag, e.g. GitLab's `!reference [job, key]`. */
export class Tagged {
  constructor(readonly tag: string, readonly value: unknown) {}
}

/** A lexicon intrinsic such as `{"Fn::Sub": …}`, rendered by its lexicon's serializer. */
export class Intrinsic {
  constructor(readonly name: string, readonly args: unknown) {}
}

export class CompositeInstance {
  constructor(readonly compositeName: string, readonly members: Record<string, unknown>) {
    Object.assign(this, members);
  }
}

export type CompositeDefinition<P> = ((props: P) => CompositeInstance) & { compositeName: string };

export function Composite<P>(factory: (props: P) => Record<string, unknown>, name = "anonymous"): CompositeDefinition<P> {
  const definition = ((props: P) => new CompositeInstance(name, factory(props))) as CompositeDefinition<P>;
  Object.defineProperty(definition, "compositeName", { value: name });
  return definition;
}

export class LexiconOutput extends Declarable {
  constructor(ref: AttrRef, name: string) {
    super("output", ref?.parent?.lexicon ?? "unknown", "Output", "Output", { ref, name });
  }
}

export function output(ref: AttrRef, name: string): LexiconOutput {
  return new LexiconOutput(ref, name);
}

/** Makes a declarable class for a catalog entry. */
export function declarableClass(lexicon: string, entityType: string, className: string, kind: DeclarableKind, attrs: string[]) {
  const C = class extends Declarable {
    constructor(props: Props = {}, attributes?: unknown) {
      super(kind, lexicon, entityType, className, props, attributes);
      for (const a of attrs) (this as Record<string, unknown>)[a] = new AttrRef(this, a);
    }
  };
  Object.defineProperty(C, "name", { value: className });
  return C;
}

export function isDeclarable(value: unknown): value is Declarable {
  return value instanceof Declarable;
}

export type ChantConfig = {
  lexicons?: string[];
  [key: string]: unknown;
};

// ---- encoding for the engine: plain JSON with markers ----

function encode(value: unknown, depth: number): unknown {
  if (depth > 200) throw new Error("value nested too deeply (a cycle?)");
  if (value === undefined) return { $u: 1 };
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : { $n: String(value) };
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "function" || typeof value === "symbol") return { $u: 1 };
  if (value instanceof Declarable) return { $d: (value as unknown as Record<symbol, number>)[ID] };
  if (value instanceof AttrRef) return { $a: [(value.parent as unknown as Record<symbol, number>)[ID], value.attribute] };
  if (value instanceof Tagged) return { $t: value.tag, v: encode(value.value, depth + 1) };
  if (value instanceof Intrinsic) return { $i: value.name, v: encode(value.args, depth + 1) };
  if (value instanceof CompositeInstance) {
    const members: [string, unknown][] = Object.entries(value.members).map(([k, v]) => [k, encode(v, depth + 1)]);
    return { $c: value.compositeName ?? "anonymous", m: members };
  }
  if (Array.isArray(value)) return value.map((v) => encode(v, depth + 1));
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === "function" && !(value instanceof Date)) return encode(withToJson.toJSON(), depth + 1);
  if (value instanceof Date) return value.toISOString();
  const entries: [string, unknown][] = Object.entries(value as object).map(([k, v]) => [k, encode(v, depth + 1)]);
  return { $o: entries };
}

export function __chant_encode_exports(namespace: Record<string, unknown>): string {
  const names = Object.keys(namespace);
  return JSON.stringify(names.map((n) => [n, encode(namespace[n], 0)]));
}

export function __chant_dump(): string {
  return JSON.stringify(
    REGISTRY.map((d) => [d.kind, d.lexicon, d.entityType, d.className, encode(d.props, 0), encode(d.attributes, 0)]),
  );
}

export function __chant_default(namespace: Record<string, unknown>): string {
  return JSON.stringify(namespace.default ?? null);
}
