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
  OrganizationsPolicy, Trail, S3BucketPolicy, ScalableTarget, ApplicationAutoScalingScalingPolicy,
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

/** A VPC with one public subnet, an internet gateway, its route and a security group. */
export const MinimalVpc = Composite((props: Props = {}) => {
  const d: Defaults = props.defaults ?? {};
  const vpc = new Vpc(mergeDefaults({
    CidrBlock: props.cidr ?? "10.0.0.0/24", EnableDnsHostnames: true, EnableDnsSupport: true,
  }, d.vpc));
  const subnet = new Subnet(mergeDefaults({
    VpcId: vpc.VpcId, CidrBlock: props.subnetCidr ?? "10.0.0.0/25",
    AvailabilityZone: Select(0, GetAZs("")), MapPublicIpOnLaunch: true,
  }, d.subnet));
  const igw = new InternetGateway({});
  const igwAttachment = new VPCGatewayAttachment({ VpcId: vpc.VpcId, InternetGatewayId: igw.InternetGatewayId });
  const routeTable = new RouteTable({ VpcId: vpc.VpcId });
  const defaultRoute = new EC2Route({
    RouteTableId: routeTable.RouteTableId, DestinationCidrBlock: "0.0.0.0/0", GatewayId: igw.InternetGatewayId,
  }, { DependsOn: [igwAttachment] });
  const subnetRta = new SubnetRouteTableAssociation({ SubnetId: subnet.SubnetId, RouteTableId: routeTable.RouteTableId });
  const securityGroup = new SecurityGroup(mergeDefaults({
    GroupDescription: "MinimalVpc default security group", VpcId: vpc.VpcId,
  }, d.securityGroup));
  return { vpc, subnet, igw, igwAttachment, routeTable, defaultRoute, subnetRta, securityGroup };
}, "MinimalVpc");

/**
 * A VPC with a public and a private subnet in each of two zones (three with `azCount: 3`), an
 * internet gateway for the public ones and a NAT gateway for the private ones.
 */
export const VpcDefault = Composite((props: Props = {}) => {
  const d: Defaults = props.defaults ?? {};
  const zones: number = props.azCount ?? 2;
  if (zones !== 2 && zones !== 3) throw new Error("VpcDefault: azCount must be 2 or 3");
  const vpc = new Vpc(mergeDefaults({
    CidrBlock: props.cidr ?? "10.0.0.0/16", EnableDnsHostnames: true, EnableDnsSupport: true,
  }, d.vpc));
  const igw = new InternetGateway({});
  const igwAttachment = new VPCGatewayAttachment({ VpcId: vpc.VpcId, InternetGatewayId: igw.InternetGatewayId });
  const publicCidrs = [props.publicSubnet1Cidr ?? "10.0.0.0/20", props.publicSubnet2Cidr ?? "10.0.16.0/20", props.publicSubnet3Cidr ?? "10.0.32.0/20"];
  const privateCidrs = [props.privateSubnet1Cidr ?? "10.0.128.0/20", props.privateSubnet2Cidr ?? "10.0.144.0/20", props.privateSubnet3Cidr ?? "10.0.160.0/20"];
  const members: Props = { vpc, igw, igwAttachment };
  for (let i = 0; i < zones; i++) {
    const n = i + 1;
    members[`publicSubnet${n}`] = new Subnet(mergeDefaults({
      VpcId: vpc.VpcId, CidrBlock: publicCidrs[i], AvailabilityZone: Select(i, GetAZs("")), MapPublicIpOnLaunch: true,
    }, d[`publicSubnet${n}`]));
  }
  for (let i = 0; i < zones; i++) {
    const n = i + 1;
    members[`privateSubnet${n}`] = new Subnet(mergeDefaults({
      VpcId: vpc.VpcId, CidrBlock: privateCidrs[i], AvailabilityZone: Select(i, GetAZs("")),
    }, d[`privateSubnet${n}`]));
  }
  const publicRouteTable = new RouteTable({ VpcId: vpc.VpcId });
  members.publicRouteTable = publicRouteTable;
  members.publicRoute = new EC2Route({
    RouteTableId: publicRouteTable.RouteTableId, DestinationCidrBlock: "0.0.0.0/0", GatewayId: igw.InternetGatewayId,
  }, { DependsOn: [igwAttachment] });
  for (let i = 0; i < zones; i++) {
    members[`publicRta${i + 1}`] = new SubnetRouteTableAssociation({
      SubnetId: members[`publicSubnet${i + 1}`].SubnetId, RouteTableId: publicRouteTable.RouteTableId,
    });
  }
  const natEip = new EIP({ Domain: "vpc" }, { DependsOn: [igwAttachment] });
  const natGateway = new NatGateway(mergeDefaults({
    AllocationId: natEip.AllocationId, SubnetId: members.publicSubnet1.SubnetId,
  }, d.natGateway));
  const privateRouteTable = new RouteTable({ VpcId: vpc.VpcId });
  members.natEip = natEip;
  members.natGateway = natGateway;
  members.privateRouteTable = privateRouteTable;
  members.privateRoute = new EC2Route({
    RouteTableId: privateRouteTable.RouteTableId, DestinationCidrBlock: "0.0.0.0/0", NatGatewayId: natGateway.NatGatewayId,
  });
  for (let i = 0; i < zones; i++) {
    members[`privateRta${i + 1}`] = new SubnetRouteTableAssociation({
      SubnetId: members[`privateSubnet${i + 1}`].SubnetId, RouteTableId: privateRouteTable.RouteTableId,
    });
  }
  return members;
}, "VpcDefault");

// ---- load balancing and containers ----

const TASK_EXECUTION = "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy";

function subnets(props: Props, composite: string, ...names: string[]) {
  for (const n of names) if (props[n] !== undefined) return props[n];
  throw new Error(`${composite}: "${names[0]}" is required`);
}

/**
 * A shared application load balancer for several Fargate services: an ECS cluster, a task
 * execution role, the load balancer's security group, the load balancer and its listener (a fixed
 * 404 until services add rules; HTTPS with `certificateArn`).
 */
export const AlbShared = Composite((props: Props) => {
  required(props, "AlbShared", ["vpcId"]);
  const d: Defaults = props.defaults ?? {};
  const https = props.protocol === "HTTPS" || props.certificateArn !== undefined;
  const port: number = props.listenerPort ?? (https ? 443 : 80);
  const cluster = new EcsCluster(mergeDefaults({ ClusterSettings: [{ Name: "containerInsights", Value: "enabled" }] }, d.cluster));
  const executionRole = new Role(mergeDefaults({ AssumeRolePolicyDocument: ecsTrustPolicy, ManagedPolicyArns: [TASK_EXECUTION] }, d.executionRole));
  const albSg = new SecurityGroup(mergeDefaults({
    GroupDescription: "Shared load balancer: its listener port from anywhere", VpcId: props.vpcId,
    SecurityGroupIngress: [{ IpProtocol: "tcp", FromPort: port, ToPort: port, CidrIp: "0.0.0.0/0" }],
  }, d.albSg));
  const alb = new LoadBalancer(mergeDefaults({
    Scheme: "internet-facing", Type: "application",
    Subnets: subnets(props, "AlbShared", "publicSubnetIds", "subnetIds"), SecurityGroups: [albSg.GroupId],
  }, d.alb));
  const listener = new Listener(mergeDefaults({
    LoadBalancerArn: alb.LoadBalancerArn, Port: port, Protocol: https ? "HTTPS" : "HTTP",
    Certificates: https && props.certificateArn ? [{ CertificateArn: props.certificateArn }] : undefined,
    SslPolicy: https ? "ELBSecurityPolicy-TLS13-1-2-2021-06" : undefined,
    DefaultActions: [{ Type: "fixed-response", FixedResponseConfig: { StatusCode: "404", ContentType: "text/plain", MessageBody: "Not found" } }],
  }, d.listener));
  return { cluster, executionRole, albSg, alb, listener };
}, "AlbShared");

/** The task definition, roles, log group, target group and service one Fargate service needs. */
function fargateParts(composite: string, props: Props, d: Defaults, executionRoleArn: unknown) {
  required(props, composite, ["image", "vpcId"]);
  const port: number = props.containerPort ?? 80;
  const name: string = props.containerName ?? "app";
  const taskRole = new Role(mergeDefaults({
    AssumeRolePolicyDocument: ecsTrustPolicy, ManagedPolicyArns: props.ManagedPolicyArns, Policies: props.Policies,
  }, d.taskRole));
  const logGroup = new LogGroup(mergeDefaults({ RetentionInDays: props.logRetentionDays ?? 30 }, d.logGroup));
  const taskDef = new TaskDefinition(mergeDefaults({
    Cpu: String(props.cpu ?? 256), Memory: String(props.memory ?? 512),
    NetworkMode: "awsvpc", RequiresCompatibilities: ["FARGATE"],
    ExecutionRoleArn: executionRoleArn, TaskRoleArn: taskRole.Arn,
    ContainerDefinitions: [{
      Name: name, Image: props.image, Essential: true, Command: props.command,
      PortMappings: [{ ContainerPort: port, Protocol: "tcp" }],
      Environment: Object.entries(props.environment ?? {}).map(([Name, Value]) => ({ Name, Value })),
      Secrets: props.secrets,
      LogConfiguration: { LogDriver: "awslogs", Options: {
        "awslogs-group": Ref(logGroup), "awslogs-region": AWS.Region, "awslogs-stream-prefix": name,
      } },
    }],
  }, d.taskDef));
  const targetGroup = new TargetGroup(mergeDefaults({
    VpcId: props.vpcId, Port: port, Protocol: "HTTP", TargetType: "ip",
    HealthCheckPath: props.healthCheckPath ?? "/", Matcher: { HttpCode: "200-399" },
  }, d.targetGroup));
  return { port, name, taskRole, logGroup, taskDef, targetGroup };
}

function fargateService(props: Props, d: Defaults, p: Props, cluster: unknown, taskSg: any, subnetIds: unknown, after: unknown) {
  return new EcsService(mergeDefaults({
    Cluster: cluster, LaunchType: "FARGATE", DesiredCount: props.desiredCount ?? 2, TaskDefinition: Ref(p.taskDef),
    NetworkConfiguration: { AwsvpcConfiguration: {
      Subnets: subnetIds, SecurityGroups: [taskSg.GroupId], AssignPublicIp: props.assignPublicIp ? "ENABLED" : "DISABLED",
    } },
    LoadBalancers: [{ ContainerName: p.name, ContainerPort: p.port, TargetGroupArn: Ref(p.targetGroup) }],
  }, d.service), { DependsOn: [after] });
}

/**
 * A Fargate service behind its own application load balancer: cluster, roles, log group,
 * task definition, security groups, load balancer, target group, listener (HTTPS with
 * `certificateArn`, then HTTP redirects to it) and the service in the private subnets.
 */
export const FargateAlb = Composite((props: Props) => {
  required(props, "FargateAlb", ["image", "vpcId"]);
  const d: Defaults = props.defaults ?? {};
  const publicSubnets = subnets(props, "FargateAlb", "publicSubnetIds", "subnetIds");
  const privateSubnets = subnets(props, "FargateAlb", "privateSubnetIds", "subnetIds");
  const https = props.certificateArn !== undefined;
  const port: number = props.listenerPort ?? (https ? 443 : 80);
  const cluster = new EcsCluster(mergeDefaults({ ClusterSettings: [{ Name: "containerInsights", Value: "enabled" }] }, d.cluster));
  const executionRole = new Role(mergeDefaults({ AssumeRolePolicyDocument: ecsTrustPolicy, ManagedPolicyArns: [TASK_EXECUTION] }, d.executionRole));
  const p = fargateParts("FargateAlb", props, d, executionRole.Arn);
  const albIngress = [{ IpProtocol: "tcp", FromPort: port, ToPort: port, CidrIp: "0.0.0.0/0" }];
  if (https) albIngress.push({ IpProtocol: "tcp", FromPort: 80, ToPort: 80, CidrIp: "0.0.0.0/0" });
  const albSg = new SecurityGroup(mergeDefaults({
    GroupDescription: "Load balancer: its listeners from anywhere", VpcId: props.vpcId, SecurityGroupIngress: albIngress,
  }, d.albSg));
  const taskSg = new SecurityGroup(mergeDefaults({
    GroupDescription: "Tasks: the container port from the load balancer", VpcId: props.vpcId,
    SecurityGroupIngress: [{ IpProtocol: "tcp", FromPort: p.port, ToPort: p.port, SourceSecurityGroupId: albSg.GroupId }],
  }, d.taskSg));
  const alb = new LoadBalancer(mergeDefaults({
    Scheme: "internet-facing", Type: "application", Subnets: publicSubnets, SecurityGroups: [albSg.GroupId],
  }, d.alb));
  const listener = new Listener(mergeDefaults({
    LoadBalancerArn: alb.LoadBalancerArn, Port: port, Protocol: https ? "HTTPS" : "HTTP",
    Certificates: https ? [{ CertificateArn: props.certificateArn }] : undefined,
    SslPolicy: https ? "ELBSecurityPolicy-TLS13-1-2-2021-06" : undefined,
    DefaultActions: [{ Type: "forward", TargetGroupArn: Ref(p.targetGroup) }],
  }, d.listener));
  const members: Props = {
    cluster, executionRole, taskRole: p.taskRole, logGroup: p.logGroup, taskDef: p.taskDef, albSg, taskSg, alb,
    targetGroup: p.targetGroup, listener,
  };
  if (https) {
    members.redirectListener = new Listener({
      LoadBalancerArn: alb.LoadBalancerArn, Port: 80, Protocol: "HTTP",
      DefaultActions: [{ Type: "redirect", RedirectConfig: { Protocol: "HTTPS", Port: String(port), StatusCode: "HTTP_301" } }],
    });
  }
  members.service = fargateService(props, d, p, Ref(cluster), taskSg, privateSubnets, listener);
  return members;
}, "FargateAlb");

/**
 * A Fargate service behind a shared load balancer (AlbShared, or one another stack exports):
 * its task definition, task role, log group, security group, target group, the listener rule
 * routing `pathPatterns`/`hostHeaders` to it, and the service.
 */
export const FargateService = Composite((props: Props) => {
  required(props, "FargateService", ["clusterArn", "listenerArn", "albSecurityGroupId", "priority"]);
  if (props.pathPatterns === undefined && props.hostHeaders === undefined && props.priority === undefined) {
    throw new Error("FargateService: give pathPatterns or hostHeaders");
  }
  const d: Defaults = props.defaults ?? {};
  const members: Props = {};
  let executionRoleArn = props.executionRoleArn;
  if (executionRoleArn === undefined) {
    const executionRole = new Role(mergeDefaults({ AssumeRolePolicyDocument: ecsTrustPolicy, ManagedPolicyArns: [TASK_EXECUTION] }, d.executionRole));
    members.executionRole = executionRole;
    executionRoleArn = executionRole.Arn;
  }
  const p = fargateParts("FargateService", props, d, executionRoleArn);
  const taskSg = new SecurityGroup(mergeDefaults({
    GroupDescription: "Tasks: the container port from the shared load balancer", VpcId: props.vpcId,
    SecurityGroupIngress: [{ IpProtocol: "tcp", FromPort: p.port, ToPort: p.port, SourceSecurityGroupId: props.albSecurityGroupId }],
  }, d.taskSg));
  const conditions: Props[] = [];
  if (props.pathPatterns) conditions.push({ Field: "path-pattern", PathPatternConfig: { Values: props.pathPatterns } });
  if (props.hostHeaders) conditions.push({ Field: "host-header", HostHeaderConfig: { Values: props.hostHeaders } });
  if (conditions.length === 0) conditions.push({ Field: "path-pattern", PathPatternConfig: { Values: ["/*"] } });
  const rule = new ListenerRule(mergeDefaults({
    ListenerArn: props.listenerArn, Priority: props.priority, Conditions: conditions,
    Actions: [{ Type: "forward", TargetGroupArn: Ref(p.targetGroup) }],
  }, d.rule));
  Object.assign(members, { taskRole: p.taskRole, logGroup: p.logGroup, taskDef: p.taskDef, taskSg, targetGroup: p.targetGroup, rule });
  const service = fargateService(props, d, p, props.clusterArn, taskSg, subnets(props, "FargateService", "privateSubnetIds", "subnetIds"), rule);
  members.service = service;
  const scaling = props.autoscaling;
  if (scaling !== undefined) {
    if (typeof scaling.maxCapacity !== "number") throw new Error("FargateService: autoscaling.maxCapacity is required");
    const scalableTarget = new ScalableTarget(mergeDefaults({
      ServiceNamespace: "ecs", ScalableDimension: "ecs:service:DesiredCount",
      ResourceId: Sub`service/${props.clusterArn}/${service.Name}`,
      MinCapacity: scaling.minCapacity ?? props.desiredCount ?? 1, MaxCapacity: scaling.maxCapacity,
    }, d.scalableTarget));
    members.scalableTarget = scalableTarget;
    members.scalingPolicy = new ApplicationAutoScalingScalingPolicy(mergeDefaults({
      PolicyName: Sub`${service.Name}-cpu`, PolicyType: "TargetTrackingScaling", ScalingTargetId: Ref(scalableTarget),
      TargetTrackingScalingPolicyConfiguration: {
        TargetValue: scaling.cpuTarget ?? 70,
        PredefinedMetricSpecification: { PredefinedMetricType: "ECSServiceAverageCPUUtilization" },
        ScaleInCooldown: scaling.scaleInCooldown ?? 60, ScaleOutCooldown: scaling.scaleOutCooldown ?? 60,
      },
    }, d.scalingPolicy));
  }
  return members;
}, "FargateService");

// ---- data ----

/**
 * An RDS database in private subnets: encrypted storage, backups, deletion protection, reachable
 * from `ingressSourceSG` (or `ingressCidr`). `masterPassword` (a NoEcho parameter's `Ref`, say) or,
 * without one, a generated password in Secrets Manager (the `masterSecret` member).
 */
export const RdsInstance = Composite((props: Props) => {
  required(props, "RdsInstance", ["vpcId", "subnetIds"]);
  const d: Defaults = props.defaults ?? {};
  const engine: string = props.engine ?? "postgres";
  const port: number = props.port ?? (engine.includes("mysql") || engine.includes("mariadb") ? 3306 : 5432);
  const username: unknown = props.masterUsername ?? "dbadmin";
  const members: Props = {};
  let password: unknown = props.masterPassword;
  let user: unknown = username;
  if (password === undefined) {
    const masterSecret = new Secret(mergeDefaults({
      Description: "Master credentials of the database",
      GenerateSecretString: {
        SecretStringTemplate: JSON.stringify({ username }),
        GenerateStringKey: "password", PasswordLength: 32, ExcludeCharacters: "\"@/\\",
      },
    }, d.masterSecret));
    members.masterSecret = masterSecret;
    password = Sub`{{resolve:secretsmanager:${Ref(masterSecret)}:SecretString:password}}`;
    user = Sub`{{resolve:secretsmanager:${Ref(masterSecret)}:SecretString:username}}`;
  }
  const ingress: Props[] = [];
  for (const sg of [props.ingressSourceSG, ...(props.allowedSecurityGroupIds ?? [])]) {
    if (sg !== undefined) ingress.push({ IpProtocol: "tcp", FromPort: port, ToPort: port, SourceSecurityGroupId: sg });
  }
  if (props.ingressCidr !== undefined) ingress.push({ IpProtocol: "tcp", FromPort: port, ToPort: port, CidrIp: props.ingressCidr });
  members.subnetGroup = new RDSDBSubnetGroup(mergeDefaults({ DBSubnetGroupDescription: "Database subnets", SubnetIds: props.subnetIds }, d.subnetGroup));
  members.sg = new SecurityGroup(mergeDefaults({
    GroupDescription: "Database: its port from the allowed sources", VpcId: props.vpcId, SecurityGroupIngress: ingress,
  }, d.sg));
  members.db = new DbInstance(mergeDefaults({
    Engine: engine, EngineVersion: props.engineVersion, DBInstanceClass: props.instanceClass ?? "db.t4g.micro",
    AllocatedStorage: String(props.allocatedStorage ?? 20), MaxAllocatedStorage: props.maxAllocatedStorage,
    StorageType: props.storageType ?? "gp3", StorageEncrypted: props.storageEncrypted ?? true, KmsKeyId: props.kmsKeyId,
    DBName: props.databaseName, Port: String(port), MasterUsername: user, MasterUserPassword: password,
    DBSubnetGroupName: Ref(members.subnetGroup), VPCSecurityGroups: [members.sg.GroupId],
    BackupRetentionPeriod: props.backupRetentionPeriod ?? 7, DeletionProtection: props.deletionProtection ?? true,
    MultiAZ: props.multiAZ ?? props.multiAz ?? false, PubliclyAccessible: props.publiclyAccessible ?? false,
    CopyTagsToSnapshot: true, AutoMinorVersionUpgrade: true,
  }, d.db), { DeletionPolicy: "Snapshot", UpdateReplacePolicy: "Snapshot" });
  return members;
}, "RdsInstance");

export const RdsPostgres = RdsInstance;

/**
 * An encrypted EFS file system with its security group (NFS from `sourceSecurityGroupId` or
 * `ingressCidr`) and an access point rooted at `rootPath`; `subnetIds` adds a mount target per subnet.
 */
export const EfsWithAccessPoint = Composite((props: Props) => {
  required(props, "EfsWithAccessPoint", ["vpcId"]);
  const d: Defaults = props.defaults ?? {};
  const ingress: Props[] = [];
  for (const sg of [props.sourceSecurityGroupId, ...(props.allowedSecurityGroupIds ?? [])]) {
    if (sg !== undefined) ingress.push({ IpProtocol: "tcp", FromPort: 2049, ToPort: 2049, SourceSecurityGroupId: sg });
  }
  if (props.sourceSecurityGroupId === undefined && props.ingressCidr !== undefined) {
    ingress.push({ IpProtocol: "tcp", FromPort: 2049, ToPort: 2049, CidrIp: props.ingressCidr });
  }
  const securityGroup = new SecurityGroup(mergeDefaults({
    GroupDescription: "EFS mount target SG", VpcId: props.vpcId,
    SecurityGroupIngress: ingress.length > 0 ? ingress : undefined,
  }, d.securityGroup));
  const fs = new EFSFileSystem(mergeDefaults({
    Encrypted: true, PerformanceMode: props.performanceMode ?? "generalPurpose", ThroughputMode: props.throughputMode ?? "bursting",
    FileSystemTags: props.name === undefined ? undefined : [{ Key: "Name", Value: props.name }],
  }, d.fs), { DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
  const uid = String(props.uid ?? 1000);
  const gid = String(props.gid ?? 1000);
  const members: Props = { securityGroup, fs };
  members.accessPoint = new EFSAccessPoint(mergeDefaults({
    FileSystemId: fs.FileSystemId,
    PosixUser: { Uid: uid, Gid: gid },
    RootDirectory: { Path: props.rootPath ?? props.path ?? "/data", CreationInfo: { OwnerUid: uid, OwnerGid: gid, Permissions: props.permissions ?? "755" } },
    AccessPointTags: props.name === undefined ? undefined : [{ Key: "Name", Value: props.name }],
  }, d.accessPoint));
  ((props.subnetIds ?? []) as unknown[]).forEach((subnet, i) => {
    members[`mountTarget${i + 1}`] = new EFSMountTarget({ FileSystemId: fs.FileSystemId, SubnetId: subnet, SecurityGroups: [securityGroup.GroupId] });
  });
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
    Name: props.name, Version: props.version ?? props.kubernetesVersion, RoleArn: clusterRole.Arn,
    ResourcesVpcConfig: {
      SubnetIds: props.subnetIds, SecurityGroupIds: props.securityGroupIds,
      EndpointPrivateAccess: true, EndpointPublicAccess: props.publicEndpoint ?? props.endpointPublicAccess ?? false,
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
  const nodegroup = new Nodegroup(mergeDefaults({
    ClusterName: Ref(cluster), NodeRole: nodeRole.Arn, Subnets: props.nodeSubnetIds ?? props.subnetIds,
    InstanceTypes: props.instanceTypes ?? ["t3.medium"],
    ScalingConfig: { MinSize: props.minSize ?? 1, DesiredSize: props.desiredSize ?? 2, MaxSize: props.maxSize ?? 3 },
  }, d.nodegroup));
  return { clusterRole, cluster, nodeRole, nodegroup };
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
