/**
 * A Lambda function and its execution role (the LambdaFunction composite).
 */

import { LambdaFunction, Sub, AWS, output } from "@intentius/chant-lexicon-aws";

export const app = LambdaFunction({
  name: Sub`${AWS.StackName}-app`,
  Runtime: "nodejs22.x",
  Handler: "index.handler",
  Code: { ZipFile: "exports.handler = async () => ({ statusCode: 200 });" },
  MemorySize: 256,
  Timeout: 10,
});

export const appArn = output(app.func.Arn, "AppFunctionArn");
