/**
 * A Fargate service behind an application load balancer, in its own VPC.
 */

import { VpcDefault, FargateAlb, output } from "@intentius/chant-lexicon-aws";

export const network = VpcDefault({});

export const web = FargateAlb({
  image: "public.ecr.aws/nginx/nginx:1.27",
  vpcId: network.vpc.VpcId,
  privateSubnetIds: [network.privateSubnet1.SubnetId, network.privateSubnet2.SubnetId],
  publicSubnetIds: [network.publicSubnet1.SubnetId, network.publicSubnet2.SubnetId],
  containerPort: 80,
  desiredCount: 2,
});

export const url = output(web.alb.DNSName, "LoadBalancerDns");
