/**
 * A PostgreSQL database in private subnets (the RdsInstance composite).
 */

import { VpcDefault, RdsInstance, output } from "@intentius/chant-lexicon-aws";

export const network = VpcDefault({});

export const database = RdsInstance({
  vpcId: network.vpc.VpcId,
  subnetIds: [network.privateSubnet1.SubnetId, network.privateSubnet2.SubnetId],
  engine: "postgres",
  databaseName: "app",
});

export const endpoint = output(database.db.Endpoint_Address, "DatabaseEndpoint");
