/**
 * A Lambda function fed by an SQS queue (the LambdaSqs composite).
 */

import { LambdaSqs, Parameter, Ref, Sub, AWS, output } from "@intentius/chant-lexicon-aws";

export const environment = new Parameter("String", { description: "Environment name", defaultValue: "dev" });

export const app = LambdaSqs({
  name: Sub`${AWS.StackName}-worker`,
  queueName: Sub`${AWS.StackName}-jobs`,
  Runtime: "python3.12",
  Handler: "app.handler",
  Code: { ZipFile: "def handler(event, context):\n    return len(event['Records'])\n" },
  Environment: { Variables: { ENVIRONMENT: Ref(environment) } },
  batchSize: 10,
  defaults: { queue: { SqsManagedSseEnabled: true } },
});

export const queueArn = output(app.queue.Arn, "QueueArn");
