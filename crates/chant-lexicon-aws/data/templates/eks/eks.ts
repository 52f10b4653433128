/**
 * An EKS cluster with a managed node group in private subnets (the EksCluster composite).
 */

import { VpcDefault, EksCluster, output } from "@intentius/chant-lexicon-aws";

export const network = VpcDefault({});

export const cluster = EksCluster({
  name: "main",
  subnetIds: [network.privateSubnet1.SubnetId, network.privateSubnet2.SubnetId],
});

export const clusterName = output(cluster.cluster.Arn, "ClusterArn");
