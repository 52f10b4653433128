// @intentius/chant-lexicon-aws composites: factories over the catalog classes. Each returns
// its members (`{ role, func }`); `export const app = LambdaFunction({...})` makes the entities
// `appRole` and `appFunc`. Every composite takes `defaults` to override a member's properties.
// Exports are one per line (`export const X`, `export function X`): the lexicon reads them.

import { Composite, mergeDefaults, withDefaults } from "@intentius/chant";
import {
  Role, Function, Function_VpcConfig, Role_Policy, Queue, EventSourceMapping, Topic, Subscription,
  Permission, EventRule, EventRule_Target, InstanceProfile, Table, Bucket, Vpc, Subnet,
  InternetGateway, VPCGatewayAttachment, RouteTable, EC2Route, SubnetRouteTableAssociation,
  NatGateway, EIP, SecurityGroup, LoadBalancer, Listener, TargetGroup, ListenerRule, EcsCluster,
  EcsService, TaskDefinition, LogGroup, DbInstance, RDSDBSubnetGroup, Secret, EFSFileSystem,
  EFSMountTarget, EFSAccessPoint, EKSCluster, Nodegroup, Organization, OrganizationalUnit,
  OrganizationsPolicy, Trail, S3BucketPolicy,
  Sub, Ref, Select, GetAZs, Cidr, AWS,
} from "@intentius/chant-lexicon-aws";

type Props = Record<string, any>;
type Defaults = Record<string, Props | undefined>;

// ---- trust policies ----

/** A trust policy letting one AWS service assume a role. */
export function trustPolicy(service: string) {
  return {
    Version: "2012-10-17",
    Statement: [{ Effect: "Allow", Principal: { Service: service }, Action: "sts:AssumeRole" }],
  };
}

export const lambdaTrustPolicy = trustPolicy("lambda.amazonaws.com");
export const ecsTrustPolicy = trustPolicy("ecs-tasks.amazonaws.com");
export const ec2TrustPolicy = trustPolicy("ec2.amazonaws.com");
export const eksTrustPolicy = trustPolicy("eks.amazonaws.com");

const BASIC_EXECUTION = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole";
const VPC_ACCESS = "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole";

function allow(name: string, actions: string[], resource: unknown) {
  return new Role_Policy({
    PolicyName: name,
    PolicyDocument: { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: actions, Resource: resource }] },
  });
}

function required(props: Props, composite: string, names: string[]) {
  if (typeof props !== "object" || props === null) {
    throw new Error(`${composite}(props): props must be an object`);
  }
  for (const n of names) {
    if (props[n] === undefined) throw new Error(`${composite}: "${n}" is required`);
  }
}

// ---- Lambda ----

/** A Lambda function and its execution role (basic execution, VPC access when `VpcConfig`). */
export const LambdaFunction = Composite((props: Props) => {
  required(props, "LambdaFunction", ["Runtime", "Handler", "Code"]);
  const d: Defaults = props.defaults ?? {};
  const managed = [BASIC_EXECUTION, ...(props.VpcConfig ? [VPC_ACCESS] : []), ...(props.ManagedPolicyArns ?? [])];
  const role = new Role(mergeDefaults({
    AssumeRolePolicyDocument: lambdaTrustPolicy,
    ManagedPolicyArns: managed,
    Policies: props.Policies,
  }, d.role));
  const func = new Function(mergeDefaults({
    FunctionName: props.name,
    Runtime: props.Runtime,
    Handler: props.Handler,
    Code: props.Code,
    Role: role.Arn,
    Timeout: props.Timeout ?? 30,
    MemorySize: props.MemorySize,
    Environment: props.Environment,
    VpcConfig: props.VpcConfig ? new Function_VpcConfig(props.VpcConfig) : undefined,
  }, d.func));
  return { role, func };
}, "LambdaFunction");

export const LambdaNode = withDefaults(LambdaFunction, { Runtime: "nodejs22.x", Handler: "index.handler" });
export const LambdaPython = withDefaults(LambdaFunction, { Runtime: "python3.12", Handler: "handler.handler" });

function invokePermission(func: any, principal: string, sourceArn: unknown, overrides?: Props) {
  return new Permission(mergeDefaults({
    FunctionName: func.Arn,
    Action: "lambda:InvokeFunction",
    Principal: principal,
    SourceArn: sourceArn,
  }, overrides));
}

/** A Lambda function fed by an SQS queue (receive policy and event source mapping). */
export const LambdaSqs = Composite((props: Props) => {
  const d: Defaults = props.defaults ?? {};
  const queue = new Queue(mergeDefaults({ QueueName: props.queueName }, d.queue));
  const receive = allow("SQSReceive", [
    "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl", "sqs:GetQueueAttributes",
  ], queue.Arn);
  const { role, func } = LambdaFunction({ ...props, Policies: [receive, ...(props.Policies ?? [])] });
  const eventSourceMapping = new EventSourceMapping(mergeDefaults({
    EventSourceArn: queue.Arn,
    FunctionName: func.Arn,
    BatchSize: props.batchSize ?? 10,
    MaximumBatchingWindowInSeconds: props.maxBatchingWindow,
  }, d.eventSourceMapping));
  return { queue, role, func, eventSourceMapping };
}, "LambdaSqs");

/** A Lambda function subscribed to an SNS topic. */
export const LambdaSns = Composite((props: Props) => {
  const d: Defaults = props.defaults ?? {};
  const { role, func } = LambdaFunction(props);
  const topic = new Topic(mergeDefaults({ TopicName: props.topicName }, d.topic));
  const subscription = new Subscription(mergeDefaults({
    TopicArn: topic.TopicArn, Protocol: "lambda", Endpoint: func.Arn,
  }, d.subscription));
  const permission = invokePermission(func, "sns.amazonaws.com", topic.TopicArn, d.permission);
  return { topic, role, func, subscription, permission };
}, "LambdaSns");

/** A Lambda function invoked by API Gateway (an invoke permission for `sourceArn`). */
export const LambdaApi = Composite((props: Props) => {
  const d: Defaults = props.defaults ?? {};
  const { role, func } = LambdaFunction(props);
  const permission = invokePermission(func, "apigateway.amazonaws.com", props.sourceArn, d.permission);
  return { role, func, permission };
}, "LambdaApi");

function ruleFor(func: any, props: Props, overrides?: Props) {
  return new EventRule(mergeDefaults({
    Name: props.ruleName,
    ScheduleExpression: props.schedule,
    EventPattern: props.eventPattern,
    State: (props.enabled ?? true) ? "ENABLED" : "DISABLED",
    Targets: [new EventRule_Target({ Arn: func.Arn, Id: "Target0" })],
  }, overrides));
}

/** A Lambda function run on a schedule (`schedule`: `rate(5 minutes)` or `cron(...)`). */
export const LambdaScheduled = Composite((props: Props) => {
  required(props, "LambdaScheduled", ["schedule"]);
  const d: Defaults = props.defaults ?? {};
  const { role, func } = LambdaFunction(props);
  const rule = ruleFor(func, props, d.rule);
  const permission = invokePermission(func, "events.amazonaws.com", rule.Arn, d.permission);
  return { role, func, rule, permission };
}, "LambdaScheduled");

export const ScheduledLambda = LambdaScheduled;

/** A Lambda function triggered by an EventBridge rule (a schedule or an event pattern). */
export const LambdaEventBridge = Composite((props: Props) => {
  if (props?.schedule === undefined && props?.eventPattern === undefined) {
    throw new Error("LambdaEventBridge: give a schedule or an eventPattern");
  }
  const d: Defaults = props.defaults ?? {};
  const { role, func } = LambdaFunction(props);
  const rule = ruleFor(func, props, d.rule);
  const permission = invokePermission(func, "events.amazonaws.com", rule.Arn, d.permission);
  return { rule, role, func, permission };
}, "LambdaEventBridge");

/** A Lambda function with a DynamoDB table (on-demand, point-in-time recovery) it may read and write. */
export const LambdaDynamoDB = Composite((props: Props) => {
  required(props, "LambdaDynamoDB", ["partitionKey"]);
  const d: Defaults = props.defaults ?? {};
  const keys = [{ AttributeName: props.partitionKey, KeyType: "HASH" }];
  const attributes = [{ AttributeName: props.partitionKey, AttributeType: props.partitionKeyType ?? "S" }];
  if (props.sortKey) {
    keys.push({ AttributeName: props.sortKey, KeyType: "RANGE" });
    attributes.push({ AttributeName: props.sortKey, AttributeType: props.sortKeyType ?? "S" });
  }
  const table = new Table(mergeDefaults({
    TableName: props.tableName,
    BillingMode: "PAY_PER_REQUEST",
    KeySchema: keys,
    AttributeDefinitions: attributes,
    PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    SSESpecification: { SSEEnabled: true },
  }, d.table));
  const actions = props.readOnly
    ? ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:BatchGetItem"]
    : ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:BatchGetItem", "dynamodb:PutItem",
       "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"];
  const access = allow("DynamoDBAccess", actions, [table.Arn, Sub`${table.Arn}/index/*`]);
  const variables = { TABLE_NAME: Ref(table), ...(props.Environment?.Variables ?? {}) };
  const { role, func } = LambdaFunction({
    ...props,
    Environment: { ...(props.Environment ?? {}), Variables: variables },
    Policies: [access, ...(props.Policies ?? [])],
  });
  return { table, role, func };
}, "LambdaDynamoDB");

/**
 * A Lambda function invoked for objects created in an encrypted, private bucket. `bucketName`
 * is required: the bucket's notification and the function's permission name it, so neither
 * waits on the other.
 */
export const LambdaS3 = Composite((props: Props) => {
  required(props, "LambdaS3", ["bucketName"]);
  const d: Defaults = props.defaults ?? {};
  const bucketArn = Sub`arn:${AWS.Partition}:s3:::${props.bucketName}`;
  const read = allow("S3Read", props.readWrite ? ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"] : ["s3:GetObject"], Sub`${bucketArn}/*`);
  const { role, func } = LambdaFunction({ ...props, Policies: [read, ...(props.Policies ?? [])] });
  const permission = invokePermission(func, "s3.amazonaws.com", bucketArn, d.permission);
  const bucket = new Bucket(mergeDefaults({
    BucketName: props.bucketName,
    BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] },
    PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    NotificationConfiguration: {
      LambdaConfigurations: (props.events ?? ["s3:ObjectCreated:*"]).map((event: string) => ({
        Event: event,
        Function: func.Arn,
        Filter: props.prefix || props.suffix ? {
          S3Key: { Rules: [
            ...(props.prefix ? [{ Name: "prefix", Value: props.prefix }] : []),
            ...(props.suffix ? [{ Name: "suffix", Value: props.suffix }] : []),
          ] },
        } : undefined,
      })),
    },
  }, d.bucket), { DependsOn: [permission] });
  const bucketPolicy = tlsOnlyPolicy(bucket, d.bucketPolicy);
  return { bucket, bucketPolicy, role, func, permission };
}, "LambdaS3");

function tlsOnlyPolicy(bucket: any, overrides?: Props) {
  return new S3BucketPolicy(mergeDefaults({
    Bucket: Ref(bucket),
    PolicyDocument: {
      Version: "2012-10-17",
      Statement: [{
        Sid: "DenyInsecureTransport", Effect: "Deny", Principal: "*", Action: "s3:*",
        Resource: [bucket.Arn, Sub`${bucket.Arn}/*`],
        Condition: { Bool: { "aws:SecureTransport": "false" } },
      }],
    },
  }, overrides));
}

// ---- networking ----

function tagged(name: unknown, extra?: unknown[]) {
  return [...(name === undefined ? [] : [{ Key: "Name", Value: name }]), ...((extra as unknown[]) ?? [])];
}

/** A VPC with one public subnet per zone (an internet gateway and a public route table). */
export const MinimalVpc = Composite((props: Props = {}) => {
  const d: Defaults = props.defaults ?? {};
  const zones: number = props.zones ?? 2;
  const vpc = new Vpc(mergeDefaults({
    CidrBlock: props.cidr ?? "10.0.0.0/16", EnableDnsHostnames: true, EnableDnsSupport: true, Tags: tagged(props.name),
  }, d.vpc));
  const igw = new InternetGateway(mergeDefaults({ Tags: tagged(props.name) }, d.igw));
  const igwAttachment = new VPCGatewayAttachment({ VpcId: Ref(vpc), InternetGatewayId: Ref(igw) });
  const publicRouteTable = new RouteTable({ VpcId: Ref(vpc) });
  const publicRoute = new EC2Route({
    RouteTableId: Ref(publicRouteTable), DestinationCidrBlock: "0.0.0.0/0", GatewayId: Ref(igw),
  }, { DependsOn: [igwAttachment] });
  const members: Props = { vpc, igw, igwAttachment, publicRouteTable, publicRoute };
  for (let i = 0; i < zones; i++) {
    const subnet = new Subnet({
      VpcId: Ref(vpc), CidrBlock: Select(i, Cidr(props.cidr ?? "10.0.0.0/16", zones * 2, 8)),
      AvailabilityZone: Select(i, GetAZs("")), MapPublicIpOnLaunch: true,
    });
    members[`publicSubnet${i + 1}`] = subnet;
    members[`publicSubnet${i + 1}RouteTableAssociation`] = new SubnetRouteTableAssociation({
      SubnetId: Ref(subnet), RouteTableId: Ref(publicRouteTable),
    });
  }
  return members;
}, "MinimalVpc");

/**
 * A VPC with public and private subnets in each zone: an internet gateway for the public
 * subnets and a NAT gateway (one, or one per zone with `natPerZone`) for the private ones.
 */
export const VpcDefault = Composite((props: Props = {}) => {
  const d: Defaults = props.defaults ?? {};
  const zones: number = props.zones ?? 2;
  const vpc = new Vpc(mergeDefaults({
    CidrBlock: props.cidr ?? "10.0.0.0/16", EnableDnsHostnames: true, EnableDnsSupport: true, Tags: tagged(props.name),
  }, d.vpc));
  const igw = new InternetGateway({ Tags: tagged(props.name) });
  const igwAttachment = new VPCGatewayAttachment({ VpcId: Ref(vpc), InternetGatewayId: Ref(igw) });
  const publicRouteTable = new RouteTable({ VpcId: Ref(vpc) });
  const publicRoute = new EC2Route({
    RouteTableId: Ref(publicRouteTable), DestinationCidrBlock: "0.0.0.0/0", GatewayId: Ref(igw),
  }, { DependsOn: [igwAttachment] });
  const members: Props = { vpc, igw, igwAttachment, publicRouteTable, publicRoute };
  const cidrs = Cidr(props.cidr ?? "10.0.0.0/16", zones * 2, 8);
  const nats: unknown[] = [];
  for (let i = 0; i < zones; i++) {
    const n = i + 1;
    const az = Select(i, GetAZs(""));
    const pub = new Subnet({ VpcId: Ref(vpc), CidrBlock: Select(i, cidrs), AvailabilityZone: az, MapPublicIpOnLaunch: true });
    members[`publicSubnet${n}`] = pub;
    members[`publicSubnet${n}RouteTableAssociation`] = new SubnetRouteTableAssociation({ SubnetId: Ref(pub), RouteTableId: Ref(publicRouteTable) });
    if (i === 0 || props.natPerZone) {
      const eip = new EIP({ Domain: "vpc" }, { DependsOn: [igwAttachment] });
      const nat = new NatGateway({ AllocationId: eip.AllocationId, SubnetId: Ref(pub) });
      members[`natEip${n}`] = eip;
      members[`natGateway${n}`] = nat;
      nats.push(nat);
    }
    const priv = new Subnet({ VpcId: Ref(vpc), CidrBlock: Select(zones + i, cidrs), AvailabilityZone: az });
    const table = new RouteTable({ VpcId: Ref(vpc) });
    members[`privateSubnet${n}`] = priv;
    members[`privateRouteTable${n}`] = table;
    members[`privateRoute${n}`] = new EC2Route({
      RouteTableId: Ref(table), DestinationCidrBlock: "0.0.0.0/0", NatGatewayId: Ref(nats[nats.length - 1]),
    });
    members[`privateSubnet${n}RouteTableAssociation`] = new SubnetRouteTableAssociation({ SubnetId: Ref(priv), RouteTableId: Ref(table) });
  }
  return members;
}, "VpcDefault");

// ---- load balancing and containers ----

/**
 * An internet-facing application load balancer with its security group and an HTTP listener
 * (a fixed 404 by default) that services attach rules to; `certificateArn` adds HTTPS and
 * redirects HTTP to it.
 */
export const AlbShared = Composite((props: Props) => {
  required(props, "AlbShared", ["vpcId", "subnetIds"]);
  const d: Defaults = props.defaults ?? {};
  const ingress = [{ IpProtocol: "tcp", FromPort: 80, ToPort: 80, CidrIp: "0.0.0.0/0" }];
  if (props.certificateArn) ingress.push({ IpProtocol: "tcp", FromPort: 443, ToPort: 443, CidrIp: "0.0.0.0/0" });
  const albSecurityGroup = new SecurityGroup(mergeDefaults({
    GroupDescription: "Load balancer: HTTP and HTTPS from anywhere", VpcId: props.vpcId, SecurityGroupIngress: ingress,
  }, d.albSecurityGroup));
  const alb = new LoadBalancer(mergeDefaults({
    Name: props.name, Scheme: "internet-facing", Type: "application",
    Subnets: props.subnetIds, SecurityGroups: [Ref(albSecurityGroup)],
  }, d.alb));
  const notFound = { Type: "fixed-response", FixedResponseConfig: { StatusCode: "404", ContentType: "text/plain", MessageBody: "Not found" } };
  const members: Props = { albSecurityGroup, alb };
  if (props.certificateArn) {
    members.httpsListener = new Listener(mergeDefaults({
      LoadBalancerArn: Ref(alb), Port: 443, Protocol: "HTTPS", Certificates: [{ CertificateArn: props.certificateArn }],
      SslPolicy: "ELBSecurityPolicy-TLS13-1-2-2021-06", DefaultActions: [notFound],
    }, d.httpsListener));
    members.listener = new Listener(mergeDefaults({
      LoadBalancerArn: Ref(alb), Port: 80, Protocol: "HTTP",
      DefaultActions: [{ Type: "redirect", RedirectConfig: { Protocol: "HTTPS", Port: "443", StatusCode: "HTTP_301" } }],
    }, d.listener));
  } else {
    members.listener = new Listener(mergeDefaults({
      LoadBalancerArn: Ref(alb), Port: 80, Protocol: "HTTP", DefaultActions: [notFound],
    }, d.listener));
  }
  return members;
}, "AlbShared");

function containerService(composite: string, props: Props, listener: unknown, rulePriority: number | undefined, extra: Props) {
  required(props, composite, ["image", "vpcId", "subnetIds"]);
  const d: Defaults = props.defaults ?? {};
  const port: number = props.containerPort ?? 80;
  const name: string = props.containerName ?? "app";
  const logGroup = new LogGroup(mergeDefaults({ RetentionInDays: props.logRetentionDays ?? 30 }, d.logGroup));
  const executionRole = new Role(mergeDefaults({
    AssumeRolePolicyDocument: ecsTrustPolicy,
    ManagedPolicyArns: ["arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"],
  }, d.executionRole));
  const taskRole = new Role(mergeDefaults({ AssumeRolePolicyDocument: ecsTrustPolicy, Policies: props.Policies }, d.taskRole));
  const taskDefinition = new TaskDefinition(mergeDefaults({
    Family: props.family, Cpu: String(props.cpu ?? 256), Memory: String(props.memory ?? 512),
    NetworkMode: "awsvpc", RequiresCompatibilities: ["FARGATE"],
    ExecutionRoleArn: executionRole.Arn, TaskRoleArn: taskRole.Arn,
    ContainerDefinitions: [{
      Name: name, Image: props.image, Essential: true,
      PortMappings: [{ ContainerPort: port, Protocol: "tcp" }],
      Environment: Object.entries(props.environment ?? {}).map(([Name, Value]) => ({ Name, Value })),
      Secrets: props.secrets,
      LogConfiguration: { LogDriver: "awslogs", Options: {
        "awslogs-group": Ref(logGroup), "awslogs-region": AWS.Region, "awslogs-stream-prefix": name,
      } },
    }],
  }, d.taskDefinition));
  const targetGroup = new TargetGroup(mergeDefaults({
    VpcId: props.vpcId, Port: port, Protocol: "HTTP", TargetType: "ip",
    HealthCheckPath: props.healthCheckPath ?? "/", Matcher: { HttpCode: "200-399" },
  }, d.targetGroup));
  const members: Props = { ...extra, logGroup, executionRole, taskRole, taskDefinition, targetGroup };
  let listenerRule: unknown;
  if (rulePriority !== undefined) {
    listenerRule = new ListenerRule(mergeDefaults({
      ListenerArn: listener, Priority: rulePriority,
      Conditions: [{ Field: "path-pattern", PathPatternConfig: { Values: props.pathPatterns ?? ["/*"] } }],
      Actions: [{ Type: "forward", TargetGroupArn: Ref(targetGroup) }],
    }, d.listenerRule));
    members.listenerRule = listenerRule;
  }
  const serviceSecurityGroup = new SecurityGroup(mergeDefaults({
    GroupDescription: `${composite}: the container port from the load balancer`, VpcId: props.vpcId,
    SecurityGroupIngress: [{ IpProtocol: "tcp", FromPort: port, ToPort: port, SourceSecurityGroupId: props.albSecurityGroupId ?? extra.albSecurityGroup?.GroupId }],
  }, d.serviceSecurityGroup));
  const cluster = props.clusterArn ?? Ref(extra.cluster);
  members.serviceSecurityGroup = serviceSecurityGroup;
  members.service = new EcsService(mergeDefaults({
    Cluster: cluster, LaunchType: "FARGATE", DesiredCount: props.desiredCount ?? 2, TaskDefinition: Ref(taskDefinition),
    NetworkConfiguration: { AwsvpcConfiguration: {
      Subnets: props.subnetIds, SecurityGroups: [Ref(serviceSecurityGroup)], AssignPublicIp: props.assignPublicIp ? "ENABLED" : "DISABLED",
    } },
    LoadBalancers: [{ ContainerName: name, ContainerPort: port, TargetGroupArn: Ref(targetGroup) }],
  }, d.service), { DependsOn: [listenerRule ?? extra.listener].filter((x) => x !== undefined) });
  return members;
}

/** A Fargate service behind its own load balancer: cluster, ALB, task, target group, service. */
export const FargateAlb = Composite((props: Props) => {
  required(props, "FargateAlb", ["image", "vpcId", "subnetIds"]);
  const d: Defaults = props.defaults ?? {};
  const cluster = new EcsCluster(mergeDefaults({
    ClusterName: props.clusterName, ClusterSettings: [{ Name: "containerInsights", Value: "enabled" }],
  }, d.cluster));
  const shared = AlbShared({ vpcId: props.vpcId, subnetIds: props.publicSubnetIds ?? props.subnetIds, name: props.name, certificateArn: props.certificateArn, defaults: d });
  const { albSecurityGroup, alb, listener } = shared as Props;
  return containerService("FargateAlb", { ...props, subnetIds: props.subnetIds }, Ref(listener), 1, { cluster, albSecurityGroup, alb, listener });
}, "FargateAlb");

/** A Fargate service attached to a shared load balancer's listener (`listenerArn`, `priority`). */
export const FargateService = Composite((props: Props) => {
  required(props, "FargateService", ["clusterArn", "listenerArn", "albSecurityGroupId", "priority"]);
  return containerService("FargateService", props, props.listenerArn, props.priority, {});
}, "FargateService");

// ---- data ----

/**
 * An RDS database in private subnets: encrypted storage, a generated master password in
 * Secrets Manager, backups, deletion protection, reachable only from `allowedSecurityGroupIds`.
 */
export const RdsInstance = Composite((props: Props) => {
  required(props, "RdsInstance", ["vpcId", "subnetIds"]);
  const d: Defaults = props.defaults ?? {};
  const engine: string = props.engine ?? "postgres";
  const port: number = props.port ?? (engine.includes("mysql") || engine.includes("mariadb") ? 3306 : 5432);
  const masterSecret = new Secret(mergeDefaults({
    Description: "Master credentials of the database",
    GenerateSecretString: {
      SecretStringTemplate: JSON.stringify({ username: props.masterUsername ?? "dbadmin" }),
      GenerateStringKey: "password", PasswordLength: 32, ExcludeCharacters: "\"@/\\",
    },
  }, d.masterSecret));
  const subnetGroup = new RDSDBSubnetGroup(mergeDefaults({ DBSubnetGroupDescription: "Database subnets", SubnetIds: props.subnetIds }, d.subnetGroup));
  const securityGroup = new SecurityGroup(mergeDefaults({
    GroupDescription: "Database: its port from the allowed security groups", VpcId: props.vpcId,
    SecurityGroupIngress: (props.allowedSecurityGroupIds ?? []).map((id: unknown) => ({ IpProtocol: "tcp", FromPort: port, ToPort: port, SourceSecurityGroupId: id })),
  }, d.securityGroup));
  const db = new DbInstance(mergeDefaults({
    Engine: engine, EngineVersion: props.engineVersion, DBInstanceClass: props.instanceClass ?? "db.t4g.micro",
    AllocatedStorage: String(props.allocatedStorage ?? 20), StorageType: "gp3", StorageEncrypted: true,
    DBName: props.databaseName, Port: String(port),
    MasterUsername: Sub`{{resolve:secretsmanager:${Ref(masterSecret)}:SecretString:username}}`,
    MasterUserPassword: Sub`{{resolve:secretsmanager:${Ref(masterSecret)}:SecretString:password}}`,
    DBSubnetGroupName: Ref(subnetGroup), VPCSecurityGroups: [securityGroup.GroupId],
    BackupRetentionPeriod: props.backupRetentionDays ?? 7, DeletionProtection: props.deletionProtection ?? true,
    MultiAZ: props.multiAz ?? false, PubliclyAccessible: false,
  }, d.db), { DeletionPolicy: "Snapshot", UpdateReplacePolicy: "Snapshot" });
  return { masterSecret, subnetGroup, securityGroup, db };
}, "RdsInstance");

export const RdsPostgres = RdsInstance;

/** An encrypted EFS file system with a mount target per subnet and one access point. */
export const EfsWithAccessPoint = Composite((props: Props) => {
  required(props, "EfsWithAccessPoint", ["vpcId", "subnetIds"]);
  const d: Defaults = props.defaults ?? {};
  const securityGroup = new SecurityGroup(mergeDefaults({
    GroupDescription: "EFS: NFS from the allowed security groups", VpcId: props.vpcId,
    SecurityGroupIngress: (props.allowedSecurityGroupIds ?? []).map((id: unknown) => ({ IpProtocol: "tcp", FromPort: 2049, ToPort: 2049, SourceSecurityGroupId: id })),
  }, d.securityGroup));
  const fileSystem = new EFSFileSystem(mergeDefaults({
    Encrypted: true, PerformanceMode: "generalPurpose", ThroughputMode: "elastic",
    BackupPolicy: { Status: "ENABLED" },
  }, d.fileSystem), { DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
  const members: Props = { securityGroup, fileSystem };
  (props.subnetIds as unknown[]).forEach((subnet, i) => {
    members[`mountTarget${i + 1}`] = new EFSMountTarget({ FileSystemId: Ref(fileSystem), SubnetId: subnet, SecurityGroups: [securityGroup.GroupId] });
  });
  const uid = String(props.uid ?? 1000);
  const gid = String(props.gid ?? 1000);
  members.accessPoint = new EFSAccessPoint(mergeDefaults({
    FileSystemId: Ref(fileSystem),
    PosixUser: { Uid: uid, Gid: gid },
    RootDirectory: { Path: props.path ?? "/data", CreationInfo: { OwnerUid: uid, OwnerGid: gid, Permissions: "0750" } },
  }, d.accessPoint));
  return members;
}, "EfsWithAccessPoint");

// ---- compute ----

/** An EC2 instance role and its instance profile. */
export const Ec2InstanceRole = Composite((props: Props = {}) => {
  const d: Defaults = props.defaults ?? {};
  const role = new Role(mergeDefaults({
    AssumeRolePolicyDocument: ec2TrustPolicy, ManagedPolicyArns: props.ManagedPolicyArns ?? [], Policies: props.Policies ?? [],
  }, d.role));
  const instanceProfile = new InstanceProfile(mergeDefaults({ Roles: [Ref(role)] }, d.instanceProfile));
  return { role, instanceProfile };
}, "Ec2InstanceRole");

/** An EKS cluster with its cluster role, a managed node group and the node role. */
export const EksCluster = Composite((props: Props) => {
  required(props, "EksCluster", ["subnetIds"]);
  const d: Defaults = props.defaults ?? {};
  const clusterRole = new Role(mergeDefaults({
    AssumeRolePolicyDocument: eksTrustPolicy, ManagedPolicyArns: ["arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"],
  }, d.clusterRole));
  const cluster = new EKSCluster(mergeDefaults({
    Name: props.name, Version: props.version, RoleArn: clusterRole.Arn,
    ResourcesVpcConfig: {
      SubnetIds: props.subnetIds, SecurityGroupIds: props.securityGroupIds,
      EndpointPrivateAccess: true, EndpointPublicAccess: props.publicEndpoint ?? false,
    },
    AccessConfig: { AuthenticationMode: "API" },
    Logging: { ClusterLogging: { EnabledTypes: [{ Type: "api" }, { Type: "audit" }, { Type: "authenticator" }] } },
  }, d.cluster));
  const nodeRole = new Role(mergeDefaults({
    AssumeRolePolicyDocument: ec2TrustPolicy,
    ManagedPolicyArns: [
      "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
      "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
      "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    ],
  }, d.nodeRole));
  const nodeGroup = new Nodegroup(mergeDefaults({
    ClusterName: Ref(cluster), NodeRole: nodeRole.Arn, Subnets: props.nodeSubnetIds ?? props.subnetIds,
    InstanceTypes: props.instanceTypes ?? ["t3.medium"],
    ScalingConfig: { MinSize: props.minSize ?? 1, DesiredSize: props.desiredSize ?? 2, MaxSize: props.maxSize ?? 3 },
  }, d.nodeGroup));
  return { clusterRole, cluster, nodeRole, nodeGroup };
}, "EksCluster");

// ---- governance ----

/**
 * An organization's foundation: the organization, its organizational units (`ous`, default
 * Security and Workloads), a service control policy denying leaving the organization and
 * tampering with the audit trail, and a multi-region organization trail into an encrypted
 * bucket that only CloudTrail may write.
 */
export const LandingZone = Composite((props: Props = {}) => {
  const d: Defaults = props.defaults ?? {};
  const organization = new Organization(mergeDefaults({ FeatureSet: "ALL" }, d.organization));
  const members: Props = { organization };
  const ous: string[] = props.ous ?? ["Security", "Workloads"];
  const ouRefs: unknown[] = [];
  for (const name of ous) {
    const key = name.replace(/[^A-Za-z0-9]/g, "");
    const ou = new OrganizationalUnit({ Name: name, ParentId: organization.RootId });
    members[`ou${key}`] = ou;
    ouRefs.push(ou.Id);
  }
  members.guardrails = new OrganizationsPolicy(mergeDefaults({
    Name: "chant-foundation-guardrails", Type: "SERVICE_CONTROL_POLICY", TargetIds: ouRefs,
    Content: {
      Version: "2012-10-17",
      Statement: [
        { Sid: "DenyLeaveOrganization", Effect: "Deny", Action: "organizations:LeaveOrganization", Resource: "*" },
        { Sid: "DenyAuditTamper", Effect: "Deny", Action: ["cloudtrail:StopLogging", "cloudtrail:DeleteTrail", "cloudtrail:UpdateTrail"], Resource: "*" },
      ],
    },
  }, d.guardrails));
  const trailBucket = new Bucket(mergeDefaults({
    BucketName: props.trailBucketName,
    BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "aws:kms" } }] },
    PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    VersioningConfiguration: { Status: "Enabled" },
  }, d.trailBucket), { DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
  const trailBucketPolicy = new S3BucketPolicy({
    Bucket: Ref(trailBucket),
    PolicyDocument: {
      Version: "2012-10-17",
      Statement: [
        { Sid: "DenyInsecureTransport", Effect: "Deny", Principal: "*", Action: "s3:*", Resource: [trailBucket.Arn, Sub`${trailBucket.Arn}/*`], Condition: { Bool: { "aws:SecureTransport": "false" } } },
        { Sid: "CloudTrailAclCheck", Effect: "Allow", Principal: { Service: "cloudtrail.amazonaws.com" }, Action: "s3:GetBucketAcl", Resource: trailBucket.Arn },
        { Sid: "CloudTrailWrite", Effect: "Allow", Principal: { Service: "cloudtrail.amazonaws.com" }, Action: "s3:PutObject", Resource: Sub`${trailBucket.Arn}/AWSLogs/*`, Condition: { StringEquals: { "s3:x-amz-acl": "bucket-owner-full-control" } } },
      ],
    },
  });
  members.trailBucket = trailBucket;
  members.trailBucketPolicy = trailBucketPolicy;
  members.trail = new Trail(mergeDefaults({
    TrailName: props.trailName ?? "organization-trail", S3BucketName: Ref(trailBucket), IsLogging: true,
    IsMultiRegionTrail: true, IsOrganizationTrail: true, EnableLogFileValidation: true, IncludeGlobalServiceEvents: true,
  }, d.trail), { DependsOn: [trailBucketPolicy] });
  return members;
}, "LandingZone");
