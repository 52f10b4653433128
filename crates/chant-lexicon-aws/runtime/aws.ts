// @intentius/chant-lexicon-aws: the hand-written part of the AWS runtime module (intrinsics,
// pseudo-parameters, template parts). The resource and property classes come from the catalog,
// one small module per class, loaded only when a project names them.
//
// Every intrinsic is a core `Intrinsic` whose name is its CloudFormation key; the serializer
// turns its arguments into JSON once logical names are known. Exports here are one per line
// (`export const X`, `export function X`, `export class X`): the lexicon reads these lines to
// know what this module offers.

import { AttrRef, Declarable, Intrinsic, LexiconOutput, declarableClass } from "@intentius/chant";

type Value = unknown;

function intrinsic(name: string, args: unknown): Intrinsic {
  return new Intrinsic(name, args);
}

// ---- pseudo-parameters ----

function pseudo(name: string): Intrinsic {
  const p = intrinsic("Pseudo", name);
  Object.defineProperty(p, "toString", {
    value: () => {
      throw new Error(`${name} is known only when the stack is deployed, not text — put it in a Sub\`…\` template, not a plain template literal or +`);
    },
    enumerable: false,
  });
  return p;
}

export const StackName = pseudo("AWS::StackName");
export const Region = pseudo("AWS::Region");
export const AccountId = pseudo("AWS::AccountId");
export const StackId = pseudo("AWS::StackId");
export const URLSuffix = pseudo("AWS::URLSuffix");
export const NoValue = pseudo("AWS::NoValue");
export const NotificationARNs = pseudo("AWS::NotificationARNs");
export const Partition = pseudo("AWS::Partition");

/** The pseudo-parameters: `AWS.Region` is `{"Ref": "AWS::Region"}`, `${AWS::Region}` in `Sub`. */
export const AWS = Object.freeze({
  StackName,
  Region,
  AccountId,
  StackId,
  URLSuffix,
  NoValue,
  NotificationARNs,
  Partition,
});

// ---- intrinsic functions ----

/**
 * `Fn::Sub`, as a tagged template (`` Sub`${AWS.StackName}-${bucket.Arn}` ``) or called with a
 * string and optional variables (`Sub("${Name}-x", { Name: ref })`).
 */
export function Sub(template: TemplateStringsArray | string, ...values: Value[]): Intrinsic {
  if (typeof template === "string") {
    return intrinsic("Fn::Sub", { parts: [template], values: [], variables: values[0] });
  }
  if (!template || !Array.isArray(template.raw ?? template)) {
    throw new Error("Sub: use it as a tagged template (Sub`...`) or call it with a string");
  }
  return intrinsic("Fn::Sub", { parts: [...template], values });
}

/** `Ref`: a parameter, resource or pseudo-parameter, by declarable or by logical name. */
export function Ref(target: Value): Intrinsic {
  if (target === undefined || target === null) {
    throw new Error("Ref(target): target is " + String(target) + " — pass a declarable or a logical name");
  }
  return intrinsic("Ref", target);
}

/** `Fn::GetAtt` by logical name (prefer `resource.Attribute`). */
export function GetAtt(logicalName: Value, attribute: string): Intrinsic {
  return intrinsic("Fn::GetAtt", [logicalName, attribute]);
}

/** `Fn::If`: a `Condition` declarable (or a condition's name), then the two values. */
export function If(condition: Value, valueIfTrue: Value, valueIfFalse: Value): Intrinsic {
  return intrinsic("Fn::If", [condition, valueIfTrue, valueIfFalse]);
}

/** `Fn::Join`: a list, or one list-returning intrinsic. */
export function Join(delimiter: string, values: Value): Intrinsic {
  if (!Array.isArray(values) && !(values instanceof Intrinsic) && !(values instanceof AttrRef)) {
    throw new Error("Join(delimiter, values): values must be an array or a list-returning intrinsic (GetAtt/Split/Ref to a List)");
  }
  return intrinsic("Fn::Join", [delimiter, values]);
}

/** `Fn::Select`: the index is written as a string, as CloudFormation documents it. */
export function Select(index: number | string, values: Value): Intrinsic {
  return intrinsic("Fn::Select", [String(index), values]);
}

export function Split(delimiter: string, source: Value): Intrinsic {
  return intrinsic("Fn::Split", [delimiter, source]);
}

export function Base64(value: Value): Intrinsic {
  return intrinsic("Fn::Base64", value);
}

/** `Fn::GetAZs`; no region means the stack's own. */
export function GetAZs(region: Value = ""): Intrinsic {
  return intrinsic("Fn::GetAZs", region);
}

export function Cidr(ipBlock: Value, count: Value, cidrBits: Value): Intrinsic {
  return intrinsic("Fn::Cidr", [ipBlock, count, cidrBits]);
}

export function ImportValue(name: Value): Intrinsic {
  return intrinsic("Fn::ImportValue", name);
}

/** `Fn::FindInMap`: a `Mapping` declarable (or a mapping's name), then the two keys. */
export function FindInMap(map: Value, topLevelKey: Value, secondLevelKey: Value): Intrinsic {
  return intrinsic("Fn::FindInMap", [map, topLevelKey, secondLevelKey]);
}

export function Equals(a: Value, b: Value): Intrinsic {
  return intrinsic("Fn::Equals", [a, b]);
}

export function And(...conditions: Value[]): Intrinsic {
  return intrinsic("Fn::And", conditions);
}

export function Or(...conditions: Value[]): Intrinsic {
  return intrinsic("Fn::Or", conditions);
}

export function Not(condition: Value): Intrinsic {
  return intrinsic("Fn::Not", [condition]);
}

// ---- template parts ----

const ParameterClass = declarableClass("aws", "AWS::CloudFormation::Parameter", "Parameter", "resource", []);

export type ParameterOptions = {
  description?: string;
  defaultValue?: unknown;
  allowedValues?: unknown[];
  allowedPattern?: string;
  constraintDescription?: string;
  minLength?: number;
  maxLength?: number;
  minValue?: number;
  maxValue?: number;
  noEcho?: boolean;
};

/** A template parameter: `new Parameter("String", { description, defaultValue, allowedValues })`. */
export class Parameter extends ParameterClass {
  constructor(type: string, options: ParameterOptions = {}) {
    super({
      Type: type,
      Description: options.description,
      Default: options.defaultValue,
      AllowedValues: options.allowedValues,
      AllowedPattern: options.allowedPattern,
      ConstraintDescription: options.constraintDescription,
      MinLength: options.minLength,
      MaxLength: options.maxLength,
      MinValue: options.minValue,
      MaxValue: options.maxValue,
      NoEcho: options.noEcho,
    });
  }
  get parameterType(): string {
    return (this.props as { Type: string }).Type;
  }
}

const ConditionClass = declarableClass("aws", "AWS::CloudFormation::Condition", "Condition", "resource", []);

/**
 * A template condition: `export const isProd = new Condition(Equals(stage, "prod"))`, used by
 * `If(isProd, …)`, other conditions and a resource's `{ Condition: isProd }` attribute.
 */
export class Condition extends ConditionClass {
  constructor(expression: Value) {
    super({ expression });
  }
}

const MappingClass = declarableClass("aws", "AWS::CloudFormation::Mapping", "Mapping", "resource", []);

/** A template mapping: `new Mapping({ "us-east-1": { Ami: "ami-1" } })`, read with `FindInMap`. */
export class Mapping extends MappingClass {
  constructor(map: Record<string, Record<string, unknown>>) {
    super({ map });
  }
}

const DefaultTagsClass = declarableClass("aws", "chant:aws:defaultTags", "DefaultTags", "resource", []);

export type TagEntry = { Key: string; Value: unknown };

/** Tags for every taggable resource of the template (a resource's own tags of the same key win). */
export function defaultTags(tags: TagEntry[]): Declarable {
  if (!Array.isArray(tags)) {
    throw new Error("defaultTags(tags): tags must be an array of { Key, Value }");
  }
  return new DefaultTagsClass({ tags });
}

const DescriptionClass = declarableClass("aws", "chant:aws:templateDescription", "TemplateDescription", "resource", []);

/** The template's `Description`. */
export function templateDescription(text: string): Declarable {
  if (typeof text !== "string") throw new Error("templateDescription(text): text must be a string");
  return new DescriptionClass({ text });
}

const resourceClasses: Record<string, ReturnType<typeof declarableClass>> = {};

/**
 * A resource of a type the catalog has no class for (`Custom::Thing`, a third-party type):
 * `resource("Custom::Thing", { ServiceToken: fn.Arn }, { DependsOn: [fn] })`.
 */
export function resource(type: string, props: Record<string, unknown> = {}, attributes?: unknown): Declarable {
  if (typeof type !== "string" || !/^[A-Za-z0-9]+::[A-Za-z0-9]+(::[A-Za-z0-9]+)?$/.test(type)) {
    throw new Error(`resource(type, props): "${String(type)}" is not a CloudFormation type name (Service::Thing)`);
  }
  const C = (resourceClasses[type] ??= declarableClass("aws", type, "Resource", "resource", []));
  return new C(props, attributes);
}

export type OutputOptions = { description?: string; export?: unknown; condition?: unknown };

const NestedStackClass = declarableClass("aws", "AWS::CloudFormation::Stack", "NestedStack", "resource", []);

/**
 * A nested stack: the child project in `projectPath` (a directory with its own chant.config.ts,
 * relative to this file) built to `<name>.template.json`, and an `AWS::CloudFormation::Stack`
 * here pointing at it (`${TemplateBasePath}/<name>.template.json`). `stack.outputs.VpcId` reads
 * the child's output `VpcId` (`Fn::GetAtt [stack, Outputs.VpcId]`).
 */
export function nestedStack(name: string, projectPath: string, options: { parameters?: Record<string, unknown> } = {}) {
  if (typeof name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    throw new Error(`nestedStack(name, projectPath): "${String(name)}" is not a file name (letters, digits, . _ -)`);
  }
  if (typeof projectPath !== "string" || projectPath === "") {
    throw new Error("nestedStack(name, projectPath): projectPath must be the child project's directory");
  }
  const stack = new NestedStackClass({ childProject: projectPath, templateName: name, parameters: options.parameters });
  const outputs = new Proxy({}, {
    get(_target, prop) {
      return typeof prop === "string" ? new AttrRef(stack, "Outputs." + prop) : undefined;
    },
  });
  Object.defineProperty(stack, "outputs", { value: outputs, enumerable: false });
  return stack;
}

/**
 * An output named by the export that holds it, for another stack to import:
 * `export const VpcId = stackOutput(vpc.VpcId, { description, exportName })`.
 */
export function stackOutput(ref: unknown, options: { description?: string; exportName?: unknown; condition?: unknown } = {}): LexiconOutput {
  return new LexiconOutput(ref, undefined, {
    lexicon: "aws", description: options.description, export: options.exportName, condition: options.condition,
  });
}

/** A template output: `output(bucket.Arn, "BucketArn", { export: Sub`${AWS.StackName}-arn` })`. */
export function output(ref: unknown, name: string, options: OutputOptions = {}): LexiconOutput {
  return new LexiconOutput(ref, name, { lexicon: "aws", ...options });
}

// ---- IAM action groups ----

// IAM actions by service and use, for policy statements (`Action: S3Actions.ReadOnly`).
export const S3Actions = Object.freeze({
  ReadOnly: ["s3:GetObject","s3:GetObjectVersion","s3:GetBucketLocation","s3:ListBucket","s3:ListBucketVersions"],
  WriteOnly: ["s3:PutObject","s3:DeleteObject","s3:PutObjectAcl","s3:AbortMultipartUpload"],
  ReadWrite: ["s3:GetObject","s3:GetObjectVersion","s3:GetBucketLocation","s3:ListBucket","s3:ListBucketVersions","s3:PutObject","s3:DeleteObject","s3:PutObjectAcl","s3:AbortMultipartUpload"],
  Full: ["s3:*"],
  GetObject: ["s3:GetObject","s3:GetObjectVersion"],
  PutObject: ["s3:PutObject","s3:AbortMultipartUpload"],
  DeleteObject: ["s3:DeleteObject","s3:DeleteObjectVersion"],
  ListObjects: ["s3:ListBucket","s3:ListBucketVersions"],
});
export const LambdaActions = Object.freeze({
  Invoke: ["lambda:InvokeFunction","lambda:InvokeAsync"],
  ReadOnly: ["lambda:GetFunction","lambda:GetFunctionConfiguration","lambda:GetPolicy","lambda:ListVersionsByFunction","lambda:ListAliases"],
  Full: ["lambda:*"],
});
export const DynamoDBActions = Object.freeze({
  ReadOnly: ["dynamodb:GetItem","dynamodb:BatchGetItem","dynamodb:Query","dynamodb:Scan","dynamodb:DescribeTable","dynamodb:ConditionCheckItem"],
  WriteOnly: ["dynamodb:PutItem","dynamodb:UpdateItem","dynamodb:DeleteItem","dynamodb:BatchWriteItem"],
  ReadWrite: ["dynamodb:GetItem","dynamodb:BatchGetItem","dynamodb:Query","dynamodb:Scan","dynamodb:DescribeTable","dynamodb:ConditionCheckItem","dynamodb:PutItem","dynamodb:UpdateItem","dynamodb:DeleteItem","dynamodb:BatchWriteItem"],
  Full: ["dynamodb:*"],
  GetItem: ["dynamodb:GetItem","dynamodb:BatchGetItem"],
  PutItem: ["dynamodb:PutItem","dynamodb:BatchWriteItem"],
  Query: ["dynamodb:Query"],
  Scan: ["dynamodb:Scan"],
});
export const SQSActions = Object.freeze({
  SendMessage: ["sqs:SendMessage","sqs:GetQueueUrl","sqs:GetQueueAttributes"],
  ReceiveMessage: ["sqs:ReceiveMessage","sqs:DeleteMessage","sqs:ChangeMessageVisibility","sqs:GetQueueUrl","sqs:GetQueueAttributes"],
  Full: ["sqs:*"],
});
export const SNSActions = Object.freeze({
  Publish: ["sns:Publish"],
  Subscribe: ["sns:Subscribe","sns:Unsubscribe"],
  Full: ["sns:*"],
});
export const IAMActions = Object.freeze({
  PassRole: ["iam:PassRole"],
});
export const ECRActions = Object.freeze({
  Pull: ["ecr:GetAuthorizationToken","ecr:BatchCheckLayerAvailability","ecr:GetDownloadUrlForLayer","ecr:BatchGetImage"],
  Full: ["ecr:*"],
});
export const LogsActions = Object.freeze({
  Write: ["logs:CreateLogStream","logs:PutLogEvents"],
  Full: ["logs:*"],
});
export const ECSActions = Object.freeze({
  RunTask: ["ecs:RunTask","ecs:StopTask","ecs:DescribeTasks"],
  Service: ["ecs:CreateService","ecs:UpdateService","ecs:DeleteService","ecs:DescribeServices"],
  Full: ["ecs:*"],
});
