import {
  LambdaFunction, LambdaNode, LambdaPython, LambdaSqs, LambdaSns, LambdaApi, LambdaScheduled, LambdaEventBridge,
  LambdaDynamoDB, LambdaS3, MinimalVpc, VpcDefault, AlbShared, FargateAlb, FargateService, RdsInstance,
  EfsWithAccessPoint, Ec2InstanceRole, EksCluster, LandingZone, Sub, AWS,
} from "@intentius/chant-lexicon-aws";

const code = { ZipFile: "exports.handler = async () => 1;" };
export const fn = LambdaFunction({ name: "fn", Runtime: "nodejs22.x", Handler: "index.handler", Code: code });
export const node = LambdaNode({ name: "node", Code: code });
export const py = LambdaPython({ name: "py", Code: code });
export const sqs = LambdaSqs({ name: "sqs", Runtime: "nodejs22.x", Handler: "i.h", Code: code });
export const sns = LambdaSns({ name: "sns", Runtime: "nodejs22.x", Handler: "i.h", Code: code });
export const api = LambdaApi({ name: "api", Runtime: "nodejs22.x", Handler: "i.h", Code: code, sourceArn: "arn:aws:execute-api:us-east-1:123456789012:x/*" });
export const cron = LambdaScheduled({ name: "cron", Runtime: "nodejs22.x", Handler: "i.h", Code: code, schedule: "rate(5 minutes)" });
export const eb = LambdaEventBridge({ name: "eb", Runtime: "nodejs22.x", Handler: "i.h", Code: code, eventPattern: { source: ["aws.ec2"] } });
export const ddb = LambdaDynamoDB({ name: "ddb", Runtime: "nodejs22.x", Handler: "i.h", Code: code, partitionKey: "pk", sortKey: "sk" });
export const s3 = LambdaS3({ name: "s3", Runtime: "nodejs22.x", Handler: "i.h", Code: code, bucketName: "my-upload-bucket-123", suffix: ".csv" });
export const small = MinimalVpc({});
export const net = VpcDefault({ azCount: 3 });
export const shared = AlbShared({ vpcId: net.vpc.VpcId, publicSubnetIds: [net.publicSubnet1.SubnetId, net.publicSubnet2.SubnetId] });
export const web = FargateAlb({ image: "nginx:1.27", vpcId: net.vpc.VpcId, privateSubnetIds: [net.privateSubnet1.SubnetId, net.privateSubnet2.SubnetId], publicSubnetIds: [net.publicSubnet1.SubnetId, net.publicSubnet2.SubnetId], certificateArn: "arn:aws:acm:us-east-1:123456789012:certificate/abc" });
export const svc = FargateService({ image: "app:1", vpcId: net.vpc.VpcId, privateSubnetIds: [net.privateSubnet1.SubnetId], clusterArn: shared.cluster.Arn, listenerArn: shared.listener.ListenerArn, albSecurityGroupId: shared.albSg.GroupId, executionRoleArn: shared.executionRole.Arn, priority: 10, pathPatterns: ["/api/*"], hostHeaders: ["api.example.com"], autoscaling: { maxCapacity: 6, cpuTarget: 60 } });
export const db = RdsInstance({ vpcId: net.vpc.VpcId, subnetIds: [net.privateSubnet1.SubnetId, net.privateSubnet2.SubnetId], ingressSourceSG: web.taskSg.GroupId });
export const efs = EfsWithAccessPoint({ name: "shared", vpcId: net.vpc.VpcId, uid: "1000", gid: "1000", rootPath: "/data", sourceSecurityGroupId: web.taskSg.GroupId, subnetIds: [net.privateSubnet1.SubnetId, net.privateSubnet2.SubnetId] });
export const ec2 = Ec2InstanceRole({});
export const eks = EksCluster({ name: "k", subnetIds: [net.privateSubnet1.SubnetId, net.privateSubnet2.SubnetId] });
export const lz = LandingZone({ trailBucketName: "org-trail-bucket-123" });
