/**
 * A VPC with public and private subnets in two zones and a NAT gateway (the VpcDefault composite).
 */

import { VpcDefault, output } from "@intentius/chant-lexicon-aws";

export const network = VpcDefault({ cidr: "10.0.0.0/16", azCount: 2 });

export const vpcId = output(network.vpc.VpcId, "VpcId");
