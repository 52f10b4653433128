/**
 * The access-log bucket: encrypted, private, TLS only, logs kept 90 days.
 */

import { Bucket, S3BucketPolicy, Sub, AWS } from "@intentius/chant-lexicon-aws";

export const logsBucket = new Bucket({
  BucketName: Sub`${AWS.StackName}-${AWS.AccountId}-logs`,
  BucketEncryption: {
    ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
  },
  OwnershipControls: { Rules: [{ ObjectOwnership: "BucketOwnerPreferred" }] },
  PublicAccessBlockConfiguration: {
    BlockPublicAcls: true,
    BlockPublicPolicy: true,
    IgnorePublicAcls: true,
    RestrictPublicBuckets: true,
  },
  LifecycleConfiguration: { Rules: [{ Id: "expire-logs", Status: "Enabled", ExpirationInDays: 90 }] },
});

export const logsBucketTls = new S3BucketPolicy({
  Bucket: logsBucket,
  PolicyDocument: {
    Version: "2012-10-17",
    Statement: [{
      Sid: "DenyInsecureTransport",
      Effect: "Deny",
      Principal: "*",
      Action: "s3:*",
      Resource: [logsBucket.Arn, Sub`${logsBucket.Arn}/*`],
      Condition: { Bool: { "aws:SecureTransport": "false" } },
    }],
  },
});
