/**
 * The data bucket: encrypted, versioned, private, reachable over TLS only.
 */

import { Bucket, S3BucketPolicy, Sub, AWS, output } from "@intentius/chant-lexicon-aws";
import { logsBucket } from "./logs-bucket";
import { stage } from "./config";

export const dataBucket = new Bucket({
  BucketName: Sub`${AWS.StackName}-${stage}-${AWS.AccountId}-data`,
  BucketEncryption: {
    ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "aws:kms" }, BucketKeyEnabled: true }],
  },
  VersioningConfiguration: { Status: "Enabled" },
  PublicAccessBlockConfiguration: {
    BlockPublicAcls: true,
    BlockPublicPolicy: true,
    IgnorePublicAcls: true,
    RestrictPublicBuckets: true,
  },
  LoggingConfiguration: { DestinationBucketName: logsBucket, LogFilePrefix: "data/" },
});

export const dataBucketTls = new S3BucketPolicy({
  Bucket: dataBucket,
  PolicyDocument: {
    Version: "2012-10-17",
    Statement: [{
      Sid: "DenyInsecureTransport",
      Effect: "Deny",
      Principal: "*",
      Action: "s3:*",
      Resource: [dataBucket.Arn, Sub`${dataBucket.Arn}/*`],
      Condition: { Bool: { "aws:SecureTransport": "false" } },
    }],
  },
});

export const dataBucketArn = output(dataBucket.Arn, "DataBucketArn");
