/**
 * An S3 bucket as it should start: KMS-encrypted, versioned, private, TLS only.
 */

import { Bucket, S3BucketPolicy, Sub, AWS, output } from "@intentius/chant-lexicon-aws";

export const bucket = new Bucket({
  BucketName: Sub`${AWS.StackName}-${AWS.AccountId}-bucket`,
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
});

export const bucketTls = new S3BucketPolicy({
  Bucket: bucket,
  PolicyDocument: {
    Version: "2012-10-17",
    Statement: [{
      Sid: "DenyInsecureTransport",
      Effect: "Deny",
      Principal: "*",
      Action: "s3:*",
      Resource: [bucket.Arn, Sub`${bucket.Arn}/*`],
      Condition: { Bool: { "aws:SecureTransport": "false" } },
    }],
  },
});

export const bucketArn = output(bucket.Arn, "BucketArn");
